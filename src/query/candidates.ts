/**
 * What each sorted index can answer of a query's constraints: blocks of its
 * positions whose rows all satisfy the constraints it covers. A range on the
 * index's first key is one block; a set of codes on it, a block per code; a
 * range (or codes) on its second key narrows each block that holds one
 * value of the first key — splitting a range on the first key into a block
 * per value when it holds few values (a skip scan).
 */
import type { Identified, SortedIndex } from '../readmodel/sorted-index.js';
import type { Table } from '../readmodel/table.js';
import type { Constraint, Keyed } from './constraints.js';

export type Check = (row: number) => boolean;

export interface Candidate {
  readonly index: SortedIndex;
  /** [from, to) pairs of positions, ascending. */
  readonly blocks: readonly number[];
  /** Rows in the blocks. */
  readonly size: number;
  /** The constraints every row of the blocks satisfies. */
  readonly covers: ReadonlySet<Constraint>;
  /** How many leading keys of the index each block holds a single value of (its rows are then in the order of the keys after). */
  readonly fixed: number;
}

/**
 * How a candidate's rows stand in the order of `order`: its blocks follow
 * one another in it ('concatenated'), each block is in it ('each'), or
 * neither.
 */
export function inOrder(candidate: Candidate, order: SortedIndex): 'concatenated' | 'each' | false {
  if (candidate.index === order) return 'concatenated';
  if (candidate.fixed === 0 || !keysFollow(candidate.index, candidate.fixed, order)) return false;
  return candidate.blocks.length === 2 ? 'concatenated' : 'each';
}

/** Whether the keys of `index` after its first `fixed` are those of `order`. */
function keysFollow(index: SortedIndex, fixed: number, order: SortedIndex): boolean {
  const keys = index.def.keys;
  const orderKeys = order.def.keys;
  return keys.length - fixed === orderKeys.length && orderKeys.every((key, i) => keys[fixed + i] === key);
}

/** A comparison in a sort costs about this many row checks; a skip scan is only tried against more rows than SKIP_SCAN_FROM. */
const SORT_COST_PER_COMPARISON = 0.5;
const SKIP_SCAN_FROM = 64;
/** Values of the leading column a skip scan visits, at most. */
const SKIP_SCAN_MAX_GROUPS = 1024;


/** Every index's candidate for these constraints (indexes none of whose first two keys is constrained give none). */
export function candidatesOf(table: Pick<Table<Identified>, 'allIndexes'>, constraints: readonly Constraint[], order: SortedIndex): Candidate[] {
  const onColumn = new Map<string, Keyed>();
  for (const c of constraints) if (c.kind === 'range' || c.kind === 'codes') onColumn.set(c.column, c);
  const out: Candidate[] = [];
  const later: Array<() => Candidate | undefined> = [];
  for (const index of table.allIndexes()) {
    const [k0, k1] = index.def.keys;
    const c0 = onColumn.get(k0!);
    const c1 = k1 === undefined ? undefined : onColumn.get(k1);
    if (c0?.kind === 'codes') {
      const blocks: number[] = [];
      for (const code of c0.codes) narrow(index, index.lowerBound(code), index.lowerBound(code + 1), c1, blocks);
      out.push(made(index, blocks, c1 ? [c0, c1] : [c0], c1?.kind === 'codes' ? 2 : 1));
      continue;
    }
    const from = c0 ? index.lowerBound(c0.lo) : 0;
    const to = c0 ? index.lowerBound(c0.hi) : index.size;
    if (c0) out.push(made(index, [from, to], [c0], 0));
    // A block per value of the first key: to narrow by the second, or to be in the order of the keys after it.
    const splits = c1 !== undefined || (c0 !== undefined && index !== order && keysFollow(index, 1, order));
    // (With no constraint on the first key, the blocks hold no fewer rows than the second key's own index: only worth it in order.)
    if (splits && (c0 !== undefined || index === order)) later.push(() => skipScan(index, from, to, c0, c1, out));
  }
  if (later.length > 0) {
    const narrowest = out.reduce((a, c) => Math.min(a, c.size), Infinity);
    if (narrowest > SKIP_SCAN_FROM) {
      for (const scan of later) {
        const candidate = scan();
        if (candidate) out.push(candidate);
      }
    }
  }
  return out;
}

function made(index: SortedIndex, blocks: number[], covers: Keyed[], fixed: number): Candidate {
  let size = 0;
  for (let b = 0; b < blocks.length; b += 2) size += blocks[b + 1]! - blocks[b]!;
  return { index, blocks, size, covers: new Set(covers), fixed };
}

/** Push the blocks of [from, to) (rows of one value of the first key) that satisfy `second`, a constraint on the second key (all if none). */
function narrow(index: SortedIndex, from: number, to: number, second: Keyed | undefined, blocks: number[]): void {
  if (from >= to) return;
  if (second === undefined) blocks.push(from, to);
  else if (second.kind === 'range') {
    const lo = index.boundOn(1, second.lo, from, to);
    const hi = index.boundNear(1, second.hi, lo, to);
    if (lo < hi) blocks.push(lo, hi);
  } else {
    for (const code of second.codes) {
      const lo = index.boundOn(1, code, from, to);
      const hi = index.boundNear(1, code + 1, lo, to);
      if (lo < hi) blocks.push(lo, hi);
    }
  }
}

/**
 * The rows of [from, to) of `index` (the first-key range `first`, all if
 * none) as a block per value of the first key, narrowed by `second`:
 * three binary searches a value. Undefined when that costs more than
 * sorting the narrowest candidate found so far would.
 */
function skipScan(index: SortedIndex, from: number, to: number, first: Keyed | undefined, second: Keyed | undefined, found: readonly Candidate[]): Candidate | undefined {
  const rival = found.reduce((a, c) => Math.min(a, c.size), index.size);
  const probes = 3 * Math.log2(index.size + 1);
  const budget = Math.min(SKIP_SCAN_MAX_GROUPS, (rival * Math.log2(rival + 1) * SORT_COST_PER_COMPARISON) / probes);
  const table = index.leadingColumn();
  const rows = index.order;
  const blocks: number[] = [];
  let at = from;
  for (let groups = 1; at < to; groups++) {
    if (groups > budget) return undefined;
    // Past 16, 64 and 256 values: as many more as the rows left hold at the rate so far, and more than twice the budget
    // in all, give up now (a leading column of timestamps holds a value a row: read to the budget, such scans cost the
    // random mix's searches 10 µs each on average).
    if ((groups === 16 || groups === 64 || groups === 256) && ((groups - 1) * (to - from)) / (at - from) > 2 * budget) return undefined;
    const next = Math.min(index.runEnd(table[rows[at]!]!), to);
    narrow(index, at, next, second, blocks);
    at = next;
  }
  const covers = [first, second].filter((c): c is Keyed => c !== undefined);
  return made(index, blocks, covers, second?.kind === 'codes' ? 2 : 1);
}
