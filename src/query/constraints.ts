/**
 * A query's filters as constraints on a table's columns: half-open ranges
 * of integers on numeric columns (microseconds, days scaled to
 * microseconds, spots, times of day, 0/1 for booleans) or of doubles
 * (logged hours), sets of codes on
 * symbol columns (a text in lower case, an id, the ids a relation filter
 * found), the rows holding a value a record holds several of (the table's
 * postings), and tests of rows for the rest (a group's items). Several
 * filters on one column are one constraint (their intersection).
 */
import type { Kind } from '../../projections/records.js';
import type { Identified, ZoneRange } from '../readmodel/sorted-index.js';
import type { Table } from '../readmodel/table.js';
import { MICROS_PER_DAY } from '../time.js';
import type { SearchView } from './engine.js';
import type { ParamDef, RangeParam, Relation, ResourceDef, SearchableTable } from './resource.js';
import type { Filter, Operator } from './schema.js';

export interface RangeConstraint {
  readonly kind: 'range';
  readonly column: string;
  lo: number;
  hi: number;
}

export interface CodesConstraint {
  readonly kind: 'codes';
  readonly column: string;
  /** Ascending, each once. */
  codes: readonly number[];
}

export interface TestConstraint {
  readonly kind: 'test';
  readonly test: (row: number) => boolean;
}

/** The rows holding a value of a parameter with values (the table's postings). */
export interface RowsConstraint {
  readonly kind: 'rows';
  readonly rows: ReadonlySet<number>;
}

export type Constraint = RangeConstraint | CodesConstraint | TestConstraint | RowsConstraint;
/** What an index can answer: a range or codes on a column. */
export type Keyed = RangeConstraint | CodesConstraint;

export type Groups<R extends Identified> = ResourceDef<Kind, R>['groups'];

export interface Constraints {
  readonly constraints: Constraint[];
  /** Set when the query names the record's id. */
  readonly id: string | undefined;
}

const bits = new Float64Array(1);
const word = new BigInt64Array(bits.buffer);
/** The least double greater than x (finite x). */
function nextUp(x: number): number {
  if (x === 0) return Number.MIN_VALUE;
  bits[0] = x;
  word[0]! += x > 0 ? 1n : -1n;
  return bits[0]!;
}

/** The half-open interval [lo, hi) of column values an operator admits (of integers, or of doubles for a number). */
export function intervalOf(type: RangeParam<unknown>['type'] | 'choice', op: Operator, value: number): [number, number] {
  const [first, next] =
    type === 'date' ? [value * MICROS_PER_DAY, (value + 1) * MICROS_PER_DAY] : type === 'number' ? [value, nextUp(value)] : [value, value + 1];
  switch (op) {
    case 'eq':
      return [first, next];
    case 'gt':
      return [next, Infinity];
    case 'gte':
      return [first, Infinity];
    case 'lt':
      return [-Infinity, first];
    case 'lte':
      return [-Infinity, next];
  }
}

const intersect = (a: readonly number[], b: readonly number[]) => {
  const set = new Set(b);
  return a.filter((code) => set.has(code));
};

/** The constraints of these filters on `table`; undefined when no record can match. */
export function constraintsOf<R extends Identified>(
  filters: readonly Filter<R>[],
  table: Table<R>,
  view: SearchView,
  groups: Groups<R> | SearchableTable['groups'],
): Constraints | undefined {
  const constraints: Constraint[] = [];
  const byColumn = new Map<string, RangeConstraint | CodesConstraint>();
  /** Per group, the values given, and whether the postings hold every one of them. */
  const grouped = new Map<string, { readonly wanted: Map<string, string>; posted: boolean }>();
  let id: string | undefined;
  let none = false;
  const range = (column: string, lo: number, hi: number) => {
    const known = byColumn.get(column) as RangeConstraint | undefined;
    if (known) {
      known.lo = Math.max(known.lo, lo);
      known.hi = Math.min(known.hi, hi);
    } else {
      const made: RangeConstraint = { kind: 'range', column, lo, hi };
      byColumn.set(column, made);
      constraints.push(made);
    }
  };
  const codes = (column: string, found: readonly number[]) => {
    const known = byColumn.get(column) as CodesConstraint | undefined;
    if (known) known.codes = intersect(known.codes, found);
    else {
      const made: CodesConstraint = { kind: 'codes', column, codes: [...new Set(found)].sort((a, b) => a - b) };
      byColumn.set(column, made);
      constraints.push(made);
    }
  };
  for (const { param, op, value } of filters) {
    switch (param.type) {
      case 'text':
      case 'uuid': {
        const wanted = String(value).toLowerCase();
        // A value a record holds several of: the rows holding it (the table's postings).
        if (param.value !== undefined) constraints.push({ kind: 'rows', rows: postingOf(table, param.name, wanted) });
        if (param.group !== undefined) {
          // The group's test holds the rows to one item (a question's id and answer together).
          let group = grouped.get(param.group);
          if (group === undefined) grouped.set(param.group, (group = { wanted: new Map(), posted: true }));
          group.wanted.set(param.name, wanted);
          group.posted &&= param.value !== undefined;
        } else if (param.primaryKey) {
          if (id !== undefined && id !== wanted) none = true;
          id = wanted;
        } else if (param.symbol !== undefined) {
          const code = table.code(param.symbol, wanted);
          codes(param.symbol, code === undefined ? [] : [code]);
        } else if (param.through !== undefined) {
          codes(param.through.symbol, relatedCodes(table, param.through, wanted, view));
        } else if (param.value === undefined) throw new Error(`parameter ${param.name} has no symbol, relation or value`);
        break;
      }
      case 'boolean':
        range(param.column, value ? 1 : 0, value ? 2 : 1);
        break;
      default: {
        const [lo, hi] = intervalOf(param.type, op, value as number);
        range(param.column, lo, hi);
      }
    }
  }
  for (const [group, { wanted, posted }] of grouped) {
    // One of a group's values, held in the postings: its rows are those holding it, exactly (the test would read every
    // record the others leave, for nothing: in a profile of the random mix over HTTP, group tests were 2.5 % of the
    // server's time).
    if (wanted.size === 1 && posted) continue;
    const matches = groups?.[group] as ((record: R, wanted: ReadonlyMap<string, string>, view: SearchView) => boolean) | undefined;
    if (!matches) throw new Error(`no group ${group}`);
    constraints.push({ kind: 'test', test: (row) => matches(table.record(row), wanted, view) });
  }
  for (const c of byColumn.values()) if (c.kind === 'range' ? c.lo >= c.hi : c.codes.length === 0) none = true;
  return none ? undefined : { constraints, id };
}

/** The rows holding a value of a parameter with values (the table keeps them for every such parameter). */
function postingOf<R extends Identified>(table: Table<R>, param: string, wanted: string): ReadonlySet<number> {
  const rows = table.holding(param, wanted);
  if (rows === undefined) throw new Error(`no postings for ${param}`);
  return rows;
}

/** The related codes a table's relation filters found, by relation and value: valid while none of the tables read changes. */
interface FoundCodes {
  /** The tables the relation reads, in order: the related one, and those its own relation reads (see relationSteps). */
  readonly tables: readonly Table<Identified>[];
  /** Their `changes` then, and last the searched table's (whose codes of the related ids were looked up). */
  readonly changes: readonly number[];
  readonly codes: readonly number[];
}

const foundCodes = new WeakMap<object, Map<string, FoundCodes>>();
/** Values remembered per table, beyond which it starts again (a cache, not a record of every value asked for). */
const FOUND_CODES_KEPT = 1024;

/** One step of a relation: the related table's declaration, and the parameter of it the relation filters by. */
interface RelationStep {
  readonly related: SearchableTable;
  readonly param: ParamDef<Identified> | undefined;
}

const stepsOf = new WeakMap<Relation, readonly RelationStep[]>();

/**
 * The steps a relation filter reads, in order: the related table, and those its own relation reads (`category.title`
 * of shifts goes through opportunities, then categories). Found once per relation (declarations refer to each other
 * through functions, so not when they are made).
 */
function relationSteps(through: Relation): readonly RelationStep[] {
  let steps = stepsOf.get(through);
  if (steps === undefined) {
    const found: RelationStep[] = [];
    for (let next: Relation | undefined = through; next !== undefined; ) {
      const related = next.table();
      const name = next.param;
      const param = related.params.find((p) => p.name === name) as ParamDef<Identified> | undefined;
      found.push({ related, param });
      next = param !== undefined && 'through' in param ? param.through : undefined;
    }
    stepsOf.set(through, (steps = found));
  }
  return steps;
}

/** The tables a relation filter reads, in order (none when one of them has no records of the institution yet). */
function tablesRead(institution: string, steps: readonly RelationStep[], view: SearchView): Table<Identified>[] | undefined {
  const tables: Table<Identified>[] = [];
  for (const { related } of steps) {
    const other = view.table(related.kind, institution) as Table<Identified> | undefined;
    if (!other) return undefined;
    tables.push(other);
  }
  return tables;
}

/**
 * The codes, in `table`'s relation column, of the related records that
 * the relation's filter matches with this value: a search of the related
 * table (of the same institution), remembered until a table it read
 * changes (a search of the related table and a code looked up per match,
 * each time, were 2.5 % of the server's time in a profile of the random mix
 * over HTTP).
 */
function relatedCodes<R extends Identified>(table: Table<R>, through: Relation, wanted: string, view: SearchView): readonly number[] {
  const steps = relationSteps(through);
  const tables = tablesRead(table.institution, steps, view);
  if (!tables) return [];
  let found = foundCodes.get(table);
  if (found === undefined) foundCodes.set(table, (found = new Map()));
  const key = `${through.symbol}\u0000${through.param}\u0000${wanted}`;
  const known = found.get(key);
  if (known !== undefined && sameState(known, tables, table.changes)) return known.codes;
  const codes = relatedCodesNow(table, tables[0]!, through.symbol, steps[0]!, wanted, view);
  if (found.size >= FOUND_CODES_KEPT) found.clear();
  found.set(key, { tables, changes: [...tables.map((t) => t.changes), table.changes], codes });
  return codes;
}

function sameState(known: FoundCodes, tables: readonly Table<Identified>[], changes: number): boolean {
  if (known.tables.length !== tables.length || known.changes[tables.length] !== changes) return false;
  for (let i = 0; i < tables.length; i++) if (known.tables[i] !== tables[i] || known.changes[i] !== tables[i]!.changes) return false;
  return true;
}

function relatedCodesNow<R extends Identified>(
  table: Table<R>,
  other: Table<Identified>,
  symbol: string,
  { related, param }: RelationStep,
  wanted: string,
  view: SearchView,
): number[] {
  if (!param) return [];
  const found = constraintsOf([{ param, op: 'eq', value: wanted, sent: param.name }], other, view, related.groups);
  if (!found) return [];
  const out: number[] = [];
  const add = (row: number) => {
    const code = table.code(symbol, other.idOf(row));
    if (code !== undefined) out.push(code);
  };
  if (found.id !== undefined) {
    const row = other.rowOf(found.id);
    if (row !== undefined) add(row);
    return out;
  }
  // Related tables are small (an institution's opportunities, categories, profiles): a scan.
  const check = checkOf(other, found.constraints);
  for (const row of other.liveRows()) if (check(row)) add(row);
  return out;
}

/** The ranges these constraints set on columns: each range, and each set of a single code as the range of it. */
export function rangesOf(constraints: readonly Constraint[]): ZoneRange[] {
  const out: ZoneRange[] = [];
  for (const c of constraints) {
    if (c.kind === 'range') out.push({ column: c.column, lo: c.lo, hi: c.hi });
    else if (c.kind === 'codes' && c.codes.length === 1) out.push({ column: c.column, lo: c.codes[0]!, hi: c.codes[0]! + 1 });
  }
  return out;
}

/**
 * Whether a row satisfies every one of these constraints, as one function:
 * ranges (and single codes, a range of one) read their columns in one
 * closure, the one that admits the fewest rows of its index first (when
 * there are several); sets of
 * codes, then row tests, after them. One call per row, not one per
 * constraint, keeps walks and scans, which call it for every row they
 * read, cheap.
 */
export function checkOf(table: Pick<Table<Identified>, 'column' | 'indexLedBy'>, constraints: readonly Constraint[]): (row: number) => boolean {
  const ranges = rangesOf(constraints).map((r) => ({ ...r, values: table.column(r.column), share: 0 }));
  const others: Array<(row: number) => boolean> = [];
  if (ranges.length > 1) {
    // The rows each admits, from its index (two binary searches): the narrowest read first.
    for (const r of ranges) {
      const index = table.indexLedBy(r.column);
      r.share = index ? index.lowerBound(r.hi) - index.lowerBound(r.lo) : Infinity;
    }
    ranges.sort((a, b) => a.share - b.share);
  }
  for (const c of constraints) if (c.kind === 'codes' && c.codes.length !== 1) others.push(inCodes(table, c));
  for (const c of constraints) if (c.kind === 'rows') others.push((row) => c.rows.has(row));
  for (const c of constraints) if (c.kind === 'test') others.push(c.test);
  const inRanges = rangesCheck(ranges);
  if (others.length === 0) return inRanges;
  return (row) => {
    if (!inRanges(row)) return false;
    for (let j = 0; j < others.length; j++) if (!others[j]!(row)) return false;
    return true;
  };
}

/** Whether a row is in every one of these ranges of columns: one closure for each count up to three (their values held in constants), a loop past that. */
function rangesCheck(ranges: ReadonlyArray<{ values: Float64Array; lo: number; hi: number }>): (row: number) => boolean {
  const [a, b, c] = ranges;
  if (a === undefined) return () => true;
  const { values: va, lo: la, hi: ha } = a;
  if (b === undefined) {
    return (row) => {
      const v = va[row]!;
      return v >= la && v < ha;
    };
  }
  const { values: vb, lo: lb, hi: hb } = b;
  if (c === undefined) {
    return (row) => {
      const v = va[row]!;
      if (v < la || v >= ha) return false;
      const w = vb[row]!;
      return w >= lb && w < hb;
    };
  }
  const { values: vc, lo: lc, hi: hc } = c;
  const rest = rangesCheck(ranges.slice(3));
  return (row) => {
    const v = va[row]!;
    if (v < la || v >= ha) return false;
    const w = vb[row]!;
    if (w < lb || w >= hb) return false;
    const x = vc[row]!;
    return x >= lc && x < hc && rest(row);
  };
}

/** Whether a row's code is one of several. */
function inCodes(table: Pick<Table<Identified>, 'column'>, c: CodesConstraint): (row: number) => boolean {
  const values = table.column(c.column);
  const member = new Uint8Array(c.codes[c.codes.length - 1]! + 1);
  for (const code of c.codes) member[code] = 1;
  return (row) => member[values[row]!] === 1;
}
