/**
 * The records of one kind for one institution, held by row: the records
 * themselves, their numeric columns in typed arrays (what searches filter
 * and sort on), and sorted indexes of rows over those columns.
 *
 * A row is one version of a record and never changes: a replaced record
 * gets a new row, and the old row keeps its values until the indexes have
 * let go of it. Changes land in the record lookup at once (projections
 * read it); the indexes catch up at `flush`, all pending changes at once,
 * when an index is next read or the projector has caught up — or, for a big
 * table while a server serves, a publication at a time in the background
 * (`publishInBackground`).
 */
import { float64s, uint32s, uint8s } from '../big-arrays.js';
import { runThrough } from './pieces.js';
import { FragmentStore } from './fragment-store.js';
import type { Stored } from './packed-times.js';
import { SymbolCodes } from './symbol-codes.js';
import { ShardedMap } from './sharded-map.js';
import { OrderRanks } from './order-ranks.js';
import { capacityFor, ColumnRanks, type IndexDef, type Identified, type NextOrder, type NumericKey, type RowSource, SortedIndex } from './sorted-index.js';

const NONE: ReadonlySet<number> = new Set();

/**
 * A row's state until the next flush: not yet in the indexes, or in them but replaced or deleted; or added by the
 * publication under way (`publishStep`), in the orders it is making.
 */
const ADDED = 1;
const REMOVED = 2;
const PUBLISHING = 3;

export interface TableSchema<R> {
  /** Numeric columns by name, computed once per record version. */
  readonly columns: Readonly<Record<string, NumericKey<R>>>;
  /**
   * String columns kept as numeric codes (one code per distinct value in
   * the table), so that matching an id is comparing two numbers.
   */
  readonly symbols?: Readonly<Record<string, (record: R) => string | null>>;
  readonly indexes: readonly IndexDef[];
  /**
   * Search parameters; those with `value` (what a record holds several of:
   * a site's users, a profile's tags, a submission's questions) get
   * postings: per value, in lower case, the rows whose record holds it.
   */
  readonly params?: readonly object[];
}

/** The values a record holds for a parameter (matching any of them). */
export type MultiValue<R> = (record: R) => string | null | undefined | readonly string[];

/** An index as saved with a snapshot: its rows as places in the order the table's records were saved in. */
export interface SavedIndex {
  readonly name: string;
  /** What the order was made from (keys and the code of their columns): a restored order must have the same. */
  readonly signature: string;
  readonly order: Uint32Array;
}

/** A column as saved with a snapshot: its values in the order the table's records were saved in. */
export interface SavedColumn {
  readonly name: string;
  /** What the values were computed by (the column's function): restored only into the same. */
  readonly signature: string;
  /** In 32-bit integers when every value is one (codes, counts, times of day): a smaller snapshot to write and read. */
  readonly values: Float64Array | Int32Array;
}

/** A table's indexes as saved with a snapshot, its columns, and the values of its symbol columns in code order. */
export interface SavedTable {
  readonly symbols: Readonly<Record<string, readonly string[]>>;
  readonly indexes: readonly SavedIndex[];
  /** Absent in snapshots of earlier versions: the columns are then computed from the records as they load. */
  readonly columns?: readonly SavedColumn[];
}

/**
 * An index or column of a table's saved form, made only as it is written (`fill`), in memory the writer lends: saving
 * a table then allocates nothing per array, and the writer can let other work run between arrays, and between pieces
 * of VALUES_A_PIECE values of one (each method is a generator that yields between pieces). (A server folding its
 * journal after a live import made every big table's indexes and columns in one stretch, then packed copies of them:
 * 100+ MB a big table, requests held for up to 1.2 s. An array at a time, a 615,000-row index took 22-38 ms, and
 * 53-256 ms while a full collection of the heap was marking, which the fold's first arrays fall in.)
 */
export interface ArrayToSave {
  readonly name: string;
  readonly signature: string;
  /** How many values. */
  readonly length: number;
  /** Bytes a value takes as saved: 4 (32-bit integers) or 8 (64-bit floats). A pass over the values, the first time. */
  width(): Generator<undefined, 4 | 8>;
  /** The values, made in `room` (at least `length * width()` bytes) from its start: the view they are in. */
  fill(room: ArrayBuffer): Generator<undefined, Uint32Array | Int32Array | Float64Array>;
}

/**
 * Values an ArrayToSave reads or makes between two yields. Most of its loops read at random (a row's place, a column
 * at a row): at 65,536 a piece, a journal fold's encoding of the benchmark's model (in-process, on a slow day: a
 * yardstick of about 80 µs) had pieces of up to 34 ms that ended with such a loop and the array's copy.
 */
const VALUES_A_PIECE = 16_384;

/** Whether `i` (a loop's index) ends a piece of VALUES_A_PIECE: where the loop yields. */
const endsPiece = (i: number) => (i & (VALUES_A_PIECE - 1)) === VALUES_A_PIECE - 1;

/** A table's saved form (SavedTable) with its indexes and columns made as they are written. */
export interface TableToSave {
  readonly symbols: Readonly<Record<string, readonly string[]>>;
  readonly indexes: readonly ArrayToSave[];
  readonly columns: readonly ArrayToSave[];
}

/** An array of a saved form as an ArrayToSave (its values copied into the room lent). */
function arrayToSave(name: string, signature: string, values: Uint32Array | Int32Array | Float64Array): ArrayToSave {
  const width = values instanceof Float64Array ? 8 : 4;
  return {
    name,
    signature,
    length: values.length,
    // (A generator with no yield: a copy is quick.)
    *width() {
      return width;
    },
    *fill(room) {
      const into = new (values.constructor as typeof Uint32Array | typeof Int32Array | typeof Float64Array)(room, 0, values.length);
      into.set(values);
      return into;
    },
  };
}

/** A saved form as a TableToSave (what `encodeTable` takes). */
export function savedTableToSave(saved: SavedTable): TableToSave {
  return {
    symbols: saved.symbols,
    indexes: saved.indexes.map(({ name, signature, order }) => arrayToSave(name, signature, order)),
    columns: (saved.columns ?? []).map(({ name, signature, values }) => arrayToSave(name, signature, values)),
  };
}

/** The saved form a TableToSave makes, each array in memory of its own. */
export function savedTableOf(table: TableToSave): SavedTable {
  const made = (array: ArrayToSave) => runThrough(array.fill(new ArrayBuffer(array.length * runThrough(array.width()))));
  return {
    symbols: table.symbols,
    indexes: table.indexes.map((index) => ({ name: index.name, signature: index.signature, order: made(index) as Uint32Array })),
    columns: table.columns.map((column) => ({ name: column.name, signature: column.signature, values: made(column) as Int32Array | Float64Array })),
  };
}

export class Table<R extends Identified> implements RowSource {
  /** Tables of fewer rows flush their changes at once even when publishing in the background (tests lower it). */
  static publishFrom = 50_000;
  /**
   * The least time from one publication of a table publishing in the background to the next, per row it holds (ms),
   * and at most `publicationGapMaxMs`. A publication makes each index's next order whole, an O(n) pass per index
   * whatever the number of changes (a shift table of 500,000 rows: ten indexes), and makes what searches derive from
   * the orders stale (positions, zone maps, rank matrices). Published as soon as the last one was done, a steady
   * stream of appends (the benchmark's 50 events every 32 ms) had the largest table publish up to 30 times a second.
   * Spaced out, a publication takes the changes of several batches at once. The cost is freshness: a search of a big
   * table may show a change up to this much later (`ReadModel.stale` says when it does, and no ETag is sent then).
   */
  static publicationGapPerRowMs = 1 / 2500;
  static publicationGapMaxMs = 250;
  /** Tables with room for fewer rows grow at once when full, a copy of a few MB at most (tests lower it). */
  static growAheadFrom = 1 << 15;
  /** Rows a step of growing ahead copies (tests lower it). */
  static growStepRows = 1 << 15;
  /**
   * A table grows ahead of need (growAhead) once this share of its room is taken: more than a load leaves taken
   * (`reserve`: 4/5), or every big table grew after each start-up, unasked, to 2.5 times its room (the benchmark's
   * first figure after a start-up, a search alone with the client: 44.2 ms at 3/4, 6.7 ms at 9/10).
   */
  static growAheadAt = 0.9;

  /** By row: the record as the model stores it (see packed-times.ts), read through `unpack`. */
  private records: (Stored<R> | undefined)[] = [];
  private changeCount = 0;
  /** Per row: the record's JSON as responses show it. */
  private readonly fragments = new FragmentStore(16);
  private readonly rowOfId = new ShardedMap<number>();
  private readonly freeRows: number[] = [];
  private readonly columnKeys: Array<[string, NumericKey<R>]>;
  private readonly dictionaries = new Map<string, SymbolCodes>();
  /** Column name → its place in columnKeys and columns. */
  private readonly columnIndex = new Map<string, number>();
  /** The column arrays, in columnKeys' order. */
  private columns: Float64Array[] = [];
  private capacity = 16;
  /**
   * A growth under way (growAhead): the bigger columns, whether the fragment store's bigger memory is allocated, and
   * the rows filled in both.
   */
  private next: { readonly capacity: number; readonly columns: Float64Array[]; fragments: boolean; filled: number } | undefined;
  private readonly indexes = new Map<string, SortedIndex>();
  /** Per row: ADDED, REMOVED or 0. */
  private pending: Uint8Array = new Uint8Array(16);
  /** Rows added since the last flush (some may have been replaced again since: see `pending`). */
  private addedRows: number[] = [];
  /** Rows in the indexes whose record has since been replaced or deleted. */
  private removedRows: number[] = [];
  /** Whether changes reach the indexes by `publishStep` (see `publishInBackground`). */
  private staged = false;
  /** The work left of the publication under way (it takes the new orders when done). */
  private publication: Generator<undefined, void> | undefined;
  /** When the last publication was taken, made a step at a time or sorted from scratch (performance.now(), ms). */
  private publishedAt = -Infinity;

  /** Index name → its signature (SavedIndex). */
  private readonly signatures = new Map<string, string>();
  /** Per column (in columnKeys' order): what computes it (SavedColumn's signature). */
  private readonly columnSignatures: string[];
  /**
   * How many rows' columns a snapshot gave (`seedColumns`) while its records load: rows are set without computing
   * their columns, which `takeColumns` computes after all if the rows turned out not to be the snapshot's.
   */
  private seededRows: number | undefined;
  /** Whether an index sorts by symbol codes (which depend on the order values came in). */
  private readonly onSymbols: boolean;
  /** Whether the symbol codes are those of a snapshot (seedSymbols). */
  private symbolsSeeded = false;
  /** Rank matrices of one index's rows by their positions in another (see OrderRanks). */
  readonly ranks = new OrderRanks();
  /** Per parameter with values: value (lower case) → the rows of the current records holding it. */
  private readonly postings = new Map<string, { readonly values: MultiValue<R>; readonly rows: Map<string, Set<number>> }>();

  /** `institution`: whose records the table holds (what relation filters search in). */
  constructor(
    schema: TableSchema<R>,
    readonly institution = '',
    /** A stored record as projections made it (the model stores some kinds' times packed). */
    private readonly unpack: (stored: Stored<R>) => R = (stored) => stored as unknown as R,
  ) {
    this.columnKeys = Object.entries(schema.columns);
    const source = (key: string) => String(schema.columns[key] ?? `symbol ${String(schema.symbols?.[key])}`);
    for (const def of schema.indexes) this.signatures.set(def.name, def.keys.map((key) => `${key}=${source(key)}`).join('\n'));
    this.onSymbols = schema.indexes.some((def) => def.keys.some((key) => schema.symbols?.[key]));
    for (const [name, value] of Object.entries(schema.symbols ?? {})) {
      const dictionary = new SymbolCodes();
      this.dictionaries.set(name, dictionary);
      this.columnKeys.push([name, (record) => dictionary.encode(value(record))]);
    }
    for (const param of schema.params ?? []) {
      const { name, value } = param as { name?: unknown; value?: unknown };
      if (typeof name === 'string' && typeof value === 'function') this.postings.set(name, { values: value as MultiValue<R>, rows: new Map() });
    }
    this.columnKeys.forEach(([name], c) => this.columnIndex.set(name, c));
    this.columnSignatures = this.columnKeys.map(([name]) => source(name));
    this.columns = this.columnKeys.map(() => float64s(this.capacity));
    for (const def of schema.indexes) {
      for (const key of def.keys) if (!this.columnIndex.has(key)) throw new Error(`index ${def.name}: no column ${key}`);
      this.indexes.set(def.name, new SortedIndex(def, this));
    }
  }

  get size(): number {
    return this.rowOfId.size;
  }

  /** Rows the table has room for without growing. */
  get room(): number {
    return this.capacity;
  }

  /** Moves on every insert, replacement and deletion: what is derived from the current records is valid while it stays. */
  get changes(): number {
    return this.changeCount;
  }

  /** Every row number is below this. */
  get rowCount(): number {
    return this.records.length;
  }

  get(id: string): R | undefined {
    const row = this.rowOfId.get(id);
    return row === undefined ? undefined : this.unpack(this.records[row]!);
  }

  /** The row of the current version of a record. */
  rowOf(id: string): number | undefined {
    return this.rowOfId.get(id);
  }

  /** The rows of the current records, in no order. */
  liveRows(): Iterable<number> {
    return this.rowOfId.values();
  }

  record(row: number): R {
    return this.unpack(this.records[row]!);
  }

  /** A row's record as the model stores it (the same object the model holds for it). */
  stored(row: number): Stored<R> {
    return this.records[row]!;
  }

  idOf(row: number): string {
    return this.records[row]!.id;
  }

  /**
   * The JSON of rows' records, each followed by a comma, as few runs of
   * bytes as they are stored in (see FragmentStore); a record's JSON is made
   * by `json` unless it was already made at this stamp (a number that moves
   * whenever anything the JSON shows besides the record itself may have
   * changed). A row never changes, so its JSON lives as long as the row.
   */
  fragmentRuns(rows: readonly number[], stamp: number, json: (record: R) => string): Buffer[] {
    return this.fragments.runs(rows, stamp, (row) => json(this.unpack(this.records[row]!)));
  }

  /** The JSON of one row's record, as `fragmentRuns` makes it (without the comma). */
  fragment(row: number, stamp: number, json: (record: R) => string): Buffer {
    return this.fragments.one(row, stamp, (r) => json(this.unpack(this.records[r]!)));
  }

  /** A column's values by row (the array is replaced when the table grows: do not keep it). */
  column(name: string): Float64Array {
    const c = this.columnIndex.get(name);
    if (c === undefined) throw new Error(`no column ${name}`);
    return this.columns[c]!;
  }

  /** The code of a value in a symbol column; undefined when no record ever had it. */
  code(symbol: string, value: string): number | undefined {
    const dictionary = this.dictionaries.get(symbol);
    if (!dictionary) throw new Error(`no symbol column ${symbol}`);
    return dictionary.code(value);
  }

  /**
   * Make the symbol codes a snapshot seeded (see SymbolCodes) until
   * `deadline` (performance.now(), ms): whether some are left.
   */
  makeSymbolCodes(deadline: number): boolean {
    for (const dictionary of this.dictionaries.values()) if (dictionary.make(deadline)) return true;
    return false;
  }

  /** Make the zone maps walks of the indexes wanted (SortedIndex.makeZoneMaps), until `deadline`: whether some are left. */
  makeZoneMaps(deadline: number): boolean {
    for (const index of this.indexes.values()) if (index.wantsZoneMaps && index.makeZoneMaps(deadline)) return true;
    return false;
  }

  /** The rows of the current records holding this value (in lower case) of a parameter with values; undefined for another parameter. */
  holding(param: string, value: string): ReadonlySet<number> | undefined {
    // (Its rows are the current ones, which a search then finds in the indexes: published first, if need be.)
    this.flush();
    const posting = this.postings.get(param);
    return posting && (posting.rows.get(value) ?? NONE);
  }

  /** Insert, replace (same id) or, with `null`, delete a record (as stored; `record`: the same as made, if at hand). */
  set(id: string, stored: Stored<R> | null, record?: R): void {
    const old = this.rowOfId.get(id);
    if (old !== undefined) {
      this.changeCount++;
      this.post(old, false);
      // (A record set again takes a new row: its id's entry is then overwritten, not deleted first.)
      if (stored === null) this.rowOfId.delete(id);
      if (this.pending[old] === ADDED) {
        this.pending[old] = 0;
        this.release(old);
      } else {
        // (In the indexes, or in the orders a publication is making: the next publication takes it out.)
        this.pending[old] = REMOVED;
        this.removedRows.push(old);
      }
    }
    if (stored !== null) this.rowOfId.set(id, this.place(stored, record));
  }

  /**
   * Set records new to the table (`stored[i]` made as `made[i]` when at hand), as `set` does, without looking for ones
   * they replace: a snapshot's, as it loads (each of its records once), their ids set a shard at a time.
   */
  addAll(stored: readonly Stored<R>[], made?: readonly (R | undefined)[]): void {
    const ids = new Array<string>(stored.length);
    const rows = new Array<number>(stored.length);
    for (let i = 0; i < stored.length; i++) {
      ids[i] = stored[i]!.id;
      rows[i] = this.place(stored[i]!, made?.[i]);
    }
    this.rowOfId.setEach(ids, rows);
  }

  /** A new row holding the record (all but its id's entry): the row. */
  private place(stored: Stored<R>, record?: R): number {
    const row = this.allocate();
    this.changeCount++;
    this.records[row] = stored;
    if (this.seededRows === undefined) this.computeColumns(row, (record ??= this.unpack(stored)));
    this.pending[row] = ADDED;
    this.addedRows.push(row);
    this.post(row, true, record);
    return row;
  }

  private computeColumns(row: number, record: R): void {
    const keys = this.columnKeys;
    const columns = this.columns;
    for (let c = 0; c < keys.length; c++) columns[c]![row] = keys[c]![1](record);
    const next = this.next;
    if (next !== undefined && row < next.filled) for (let c = 0; c < keys.length; c++) next.columns[c]![row] = columns[c]![row]!;
  }

  /** Add a row to (or take it from) the postings of its record's values. */
  private post(row: number, add: boolean, made?: R): void {
    if (this.postings.size === 0) return;
    const record = made ?? this.unpack(this.records[row]!);
    for (const { values, rows } of this.postings.values()) {
      const held = values(record);
      for (const value of held === null || held === undefined ? [] : typeof held === 'string' ? [held] : held) {
        const key = value.toLowerCase();
        let posting = rows.get(key);
        if (add) {
          if (posting === undefined) rows.set(key, (posting = new Set()));
          posting.add(row);
        } else if (posting !== undefined) {
          posting.delete(row);
          if (posting.size === 0) rows.delete(key);
        }
      }
    }
  }

  /** An index, up to date (as of the last publication, for a table that publishes in the background). */
  index(name: string): SortedIndex {
    this.catchUp();
    const index = this.indexes.get(name);
    if (!index) throw new Error(`no index ${name}`);
    return index;
  }

  /** Every index, up to date (as `index`). */
  allIndexes(): Iterable<SortedIndex> {
    this.catchUp();
    return this.indexes.values();
  }

  /** An index sorted first by this column (the preferred one if it is), up to date (as `index`). */
  indexLedBy(column: string, preferred?: SortedIndex): SortedIndex | undefined {
    this.catchUp();
    if (preferred?.leading === column) return preferred;
    for (const index of this.indexes.values()) if (index.leading === column) return index;
    return undefined;
  }

  /**
   * The indexes, columns and symbol codes, for saving with a snapshot;
   * `placeOf[row]` is the row's place in the order the snapshot lists the
   * table's records in (the places of the live rows, 0 to size - 1). Each
   * array is made when it is written: the table must not change until then.
   */
  toSave(placeOf: Uint32Array): TableToSave {
    this.flush();
    const indexes = [...this.signatures].map(([name, signature]): ArrayToSave => {
      const index = this.indexes.get(name)!;
      return {
        name,
        signature,
        length: index.size,
        *width() {
          return 4;
        },
        *fill(room) {
          const rows = index.order;
          const order = new Uint32Array(room, 0, index.size);
          for (let k = 0; k < order.length; k++) {
            order[k] = placeOf[rows[k]!]!;
            if (endsPiece(k)) yield;
          }
          return order;
        },
      };
    });
    const symbols: Record<string, readonly string[]> = {};
    for (const [name, dictionary] of this.dictionaries) symbols[name] = dictionary.values();
    // The row at each place: every column is read in the snapshot's order through it (made once, for the first).
    let rowsByPlace: Uint32Array | undefined;
    const table = this;
    function* rowAt(): Generator<undefined, Uint32Array> {
      if (rowsByPlace === undefined) {
        const rows = uint32s(table.size);
        let i = 0;
        for (const row of table.rowOfId.values()) {
          rows[placeOf[row]!] = row;
          if (endsPiece(i++)) yield;
        }
        rowsByPlace = rows;
      }
      return rowsByPlace;
    }
    const columns = this.columnKeys.map(([name], c): ArrayToSave => {
      let width: 4 | 8 | undefined;
      function* widthOf(): Generator<undefined, 4 | 8> {
        if (width !== undefined) return width;
        const column = table.columns[c]!;
        const rows = yield* rowAt();
        let narrow = true;
        for (let i = 0; narrow && i < rows.length; i++) {
          const value = column[rows[i]!]!;
          narrow = (value | 0) === value && (value !== 0 || 1 / value > 0);
          if (endsPiece(i)) yield;
        }
        return (width = narrow ? 4 : 8);
      }
      return {
        name,
        signature: this.columnSignatures[c]!,
        length: this.size,
        width: widthOf,
        *fill(room) {
          const column = table.columns[c]!;
          const rows = yield* rowAt();
          const values = (yield* widthOf()) === 4 ? new Int32Array(room, 0, rows.length) : new Float64Array(room, 0, rows.length);
          for (let i = 0; i < rows.length; i++) {
            values[i] = column[rows[i]!]!;
            if (endsPiece(i)) yield;
          }
          return values;
        },
      };
    });
    return { symbols, indexes, columns };
  }

  /** The indexes, columns and symbol codes as `toSave` gives them, made at once. */
  save(placeOf: Uint32Array): SavedTable {
    return savedTableOf(this.toSave(placeOf));
  }

  /**
   * Before any record is set, symbol codes seeded from the same snapshot, room reserved: take its columns instead
   * of computing each record's as it loads (dates, codes of ids and of lower-cased texts: a restart at a million
   * shifts was ready after 3.0–3.8 s instead of 3.9–4.1 s). Copied at once, so that the snapshot's arrays are let
   * go of. Nothing is taken unless every column was saved by the same function.
   */
  seedColumns(saved: SavedTable['columns']): void {
    // Symbol codes mean something only with the dictionary they were made with.
    if (saved === undefined || this.records.length > 0 || (this.dictionaries.size > 0 && !this.symbolsSeeded)) return;
    const byName = new Map(saved.map((column) => [column.name, column]));
    const values: (Float64Array | Int32Array)[] = [];
    for (const [c, [name]] of this.columnKeys.entries()) {
      const column = byName.get(name);
      if (column === undefined || column.signature !== this.columnSignatures[c] || column.values.length !== saved[0]!.values.length) return;
      values.push(column.values);
    }
    const n = values[0]?.length ?? 0;
    if (n > this.capacity) this.grow(capacityFor(n));
    values.forEach((column, c) => this.columns[c]!.set(column));
    this.seededRows = n;
  }

  /**
   * Once the snapshot's records are set: keep the columns seeded when the rows are its records in its order
   * (row = place, nothing else set), else compute every row's.
   */
  takeColumns(): void {
    const seeded = this.seededRows;
    if (seeded === undefined) return;
    this.seededRows = undefined;
    const n = this.records.length;
    if (n === seeded && n === this.rowOfId.size && this.removedRows.length === 0) return;
    for (const row of this.rowOfId.values()) this.computeColumns(row, this.unpack(this.records[row]!));
  }

  /** Before any record is set: give symbol values the codes a snapshot saved them with. */
  seedSymbols(symbols: SavedTable['symbols']): void {
    if (this.records.length > 0 || [...this.dictionaries.keys()].some((name) => !symbols[name])) return;
    for (const [name, dictionary] of this.dictionaries) dictionary.seedWith(symbols[name]!);
    this.symbolsSeeded = true;
  }

  /**
   * Right after the records of a snapshot were set, in its order (row =
   * place, nothing else set), symbol codes seeded from it: take the saved
   * indexes instead of sorting. False, changing nothing, unless every index
   * was saved from the same definition over the same number of records.
   */
  restoreIndexes(saved: readonly SavedIndex[]): boolean {
    const n = this.records.length;
    if (n !== this.rowOfId.size || this.removedRows.length > 0 || this.addedRows.length !== n) return false;
    if (this.onSymbols && !this.symbolsSeeded) return false;
    const byName = new Map(saved.map((index) => [index.name, index]));
    for (const name of this.indexes.keys()) {
      const index = byName.get(name);
      if (!index || index.signature !== this.signatures.get(name) || index.order.length !== n) return false;
    }
    for (const [name, index] of this.indexes) index.restore(byName.get(name)!.order);
    this.pending.fill(0, 0, n);
    this.addedRows = [];
    return true;
  }

  /** Bring the indexes up to date now: the publication under way finished, and every change since. */
  flush(): void {
    while (this.publication !== undefined) this.publishStep(Infinity);
    if (!this.hasChanges()) return;
    const pending = this.pending;
    const removed = this.removedRows;
    const many = this.manyChanges();
    const added = this.takeAdded(0);
    if (many) {
      // Many changes (a start-up, a replay): sort every row from scratch.
      const rows = Uint32Array.from(this.rowOfId.values());
      const ranks = new ColumnRanks(this, rows, this.records.length);
      const sorted: SortedIndex[] = [];
      for (const index of this.indexes.values()) {
        index.rebuild(rows, ranks, sorted);
        sorted.push(index);
      }
    } else {
      const isRemoved = (row: number) => pending[row] === REMOVED;
      for (const index of this.indexes.values()) index.update(isRemoved, removed, added);
    }
    this.ranks.changed(this.indexedRows);
    this.releaseAll(removed);
    this.removedRows = [];
  }

  /**
   * Rows the indexes hold (every index holds every row of the table): not `size`, which counts the records of changes a
   * publication under way leaves to the next.
   */
  private get indexedRows(): number {
    for (const index of this.indexes.values()) return index.size;
    return 0;
  }

  /** Whether changes wait for the indexes (in a publication under way or not yet in one). */
  get unpublished(): boolean {
    return this.publication !== undefined || this.hasChanges();
  }

  /** Whether a publication is under way (publishStep). */
  get publishing(): boolean {
    return this.publication !== undefined;
  }

  /** Whether searches now see the table as it was before some of its changes (they wait for a publication). */
  get stale(): boolean {
    return this.publishedLater && this.unpublished;
  }

  /** Whether changes reach the indexes only by publication (a big table publishing in the background), not when read. */
  private get publishedLater(): boolean {
    return this.staged && this.rowOfId.size >= Table.publishFrom;
  }

  private hasChanges(): boolean {
    return this.addedRows.length > 0 || this.removedRows.length > 0;
  }

  /** Whether the changes are many beside the rows indexed (a start-up, a replay): every row is then sorted from scratch. */
  private manyChanges(): boolean {
    const changes = this.addedRows.length + this.removedRows.length;
    return changes * 4 >= this.rowOfId.size - this.addedRows.length + this.removedRows.length;
  }

  /** The rows added since the last flush that are still current (each once), marked `state`; the list emptied. */
  private takeAdded(state: number): number[] {
    const pending = this.pending;
    const added: number[] = [];
    // A row re-used after a replacement can be listed twice: take it once.
    for (const row of this.addedRows) {
      if (pending[row] !== ADDED) continue;
      pending[row] = state;
      added.push(row);
    }
    this.addedRows = [];
    return added;
  }

  /** Rows out of every index now: their room goes back to the table. */
  private releaseAll(removed: readonly number[]): void {
    for (const row of removed) {
      this.pending[row] = 0;
      this.release(row);
    }
  }

  /**
   * Publish changes in the background from now on (`on`), or flush them as they are read again. Publishing, a
   * table of at least `publishFrom` rows leaves its indexes as they are when read: the server's background work
   * brings them up to date (`publishStep`), and searches meanwhile see the table as of the last publication, in
   * step with itself. Flushing every change when an index is read moved every big index's rows each time (a
   * copy of each order, whatever the number of changes): during a live import, one request in a few paid 10-90 ms
   * for the changes since the one before.
   */
  publishInBackground(on: boolean): void {
    this.staged = on;
    if (!on) this.flush();
  }

  /** Bring the indexes up to date now, unless they are published in the background (see `publishInBackground`). */
  catchUp(): void {
    if (!this.publishedLater) this.flush();
  }

  /**
   * A step of publishing the changes, and more until `deadline` (performance.now(), ms): a publication takes
   * the changes so far and makes each index's next order beside the current one (SortedIndex.nextOrder, a step
   * at a time), then takes them all at once. Changes made meanwhile wait for the next. Whether there is more to
   * do now.
   */
  publishStep(deadline: number): boolean {
    if (this.publication === undefined) {
      if (performance.now() < this.publicationDue) return false;
      if (this.manyChanges()) {
        this.flush(); // (sorted from scratch: no cheaper a step at a time)
        this.publishedAt = performance.now();
        return false;
      }
      const added = this.takeAdded(PUBLISHING);
      const removed = this.removedRows;
      this.removedRows = [];
      this.publication = this.publicationWork(added, removed);
    }
    const work = this.publication;
    do {
      if (work.next().done) {
        this.publication = undefined;
        this.publishedAt = performance.now();
        return false;
      }
    } while (performance.now() < deadline);
    return true;
  }

  /**
   * When the changes waiting may be published (performance.now(), ms: see publicationGapPerRowMs): -Infinity (now)
   * while a publication is under way, Infinity when nothing waits.
   */
  get publicationDue(): number {
    if (this.publication !== undefined) return -Infinity;
    if (!this.hasChanges()) return Infinity;
    return this.publishedAt + Math.min(Table.publicationGapMaxMs, this.rowOfId.size * Table.publicationGapPerRowMs);
  }

  /** The work of a publication: every index's next order made, then all taken at once. */
  private *publicationWork(added: readonly number[], removed: readonly number[]): Generator<undefined, void> {
    // (What a merge of every row drops, when a removed row is not found: this publication's removed rows only; those
    // removed since wait for the next.)
    const gone = new Set(removed);
    const isRemoved = (row: number) => gone.has(row);
    const orders: Array<[SortedIndex, NextOrder]> = [];
    for (const index of this.indexes.values()) {
      orders.push([index, yield* index.nextOrder(isRemoved, removed, added)]);
      yield;
    }
    for (const [index, order] of orders) index.adopt(order);
    this.ranks.changed(this.indexedRows);
    for (const row of added) if (this.pending[row] === PUBLISHING) this.pending[row] = 0;
    this.releaseAll(removed);
  }

  /**
   * Make room for this many rows at once (before a bulk load: one allocation instead of a doubling per size), and a
   * quarter more: the first rows added after a load would otherwise grow every column at once (a stall of up to a
   * second at a million rows, while serving).
   */
  reserve(rows: number): void {
    if (rows > this.capacity) this.grow(capacityFor(rows));
  }

  private allocate(): number {
    const free = this.freeRows.pop();
    if (free !== undefined) return free;
    const row = this.records.length;
    if (row >= this.capacity) {
      // The growth begun in the background, finished now, or a new one.
      this.next ??= this.growth(this.grownCapacity());
      this.finishGrowth();
    }
    this.records.push(undefined);
    return row;
  }

  private grownCapacity(): number {
    return capacityFor(this.capacity + 1) * 2;
  }

  /**
   * Grow ahead of need, a step at least and more until `deadline` (performance.now(), ms): once most of a big
   * table's room is taken, its bigger columns and fragment entries are made between requests — an array a call,
   * then the rows copied a piece at a time — and taken when done, or when a row needs them. Grown at once, at the
   * row that found the table full, a live import's requests all waited: 63 ms of copying at 600,000 rows, followed
   * by 100–300 ms of collection in the CPU profiles.
   *
   * The arrays were once allocated in one step: V8 starts a collection of the whole heap each time the memory held
   * outside it has grown by 64 MB since the last, and a growth's arrays allocated one a step, 50 ms apart, started
   * one collection after the other. They are shared memory now, which V8 does not count (big-arrays.ts), and
   * allocated together they could hold the thread: a growth to room for 804,410 rows (6.4 MB a column, 19 MB of
   * fragment entries; 70-85 MB in all) allocated them in 0.6 ms in one operator live step, and in another a single
   * call of this took 80 ms on the CPU (memory the process had freed before, cleared by the allocator as it is
   * handed out, as I read it: not confirmed). An array a call bounds that to one array. Whether there is more to do
   * now.
   */
  growAhead(deadline: number): boolean {
    if (this.next === undefined) {
      if (this.capacity < Table.growAheadFrom || this.records.length < this.capacity * Table.growAheadAt) return false;
      this.next = this.growth(this.grownCapacity());
    }
    do {
      const step = this.growStep();
      if (step !== 'copied') return step === 'allocated';
    } while (performance.now() < deadline);
    return true;
  }

  /**
   * For a table that publishes its changes in the background (a big one), the memory each index makes its next order
   * in (SortedIndex.makeSpare), every index's at once (as a growth's, see growAhead): made by the server's background
   * work ahead of the first change. Whether it allocated any.
   */
  makeSpares(): boolean {
    if (!this.publishedLater) return false;
    let made = false;
    for (const index of this.indexes.values()) made = index.makeSpare() || made;
    return made;
  }

  /** One step of growing ahead (see growAhead): an array of its memory, or a piece of the rows copied, or the growth taken. */
  private growStep(): 'allocated' | 'copied' | 'taken' {
    const next = this.next!;
    if (next.columns.length < this.columns.length) {
      next.columns.push(float64s(next.capacity));
      return 'allocated';
    }
    if (!next.fragments) {
      this.fragments.growAhead(next.capacity);
      next.fragments = true;
      return 'allocated';
    }
    if (next.filled < next.capacity) {
      const to = Math.min(next.filled + Table.growStepRows, next.capacity);
      const copied = Math.min(to, this.capacity);
      if (copied > next.filled) for (let c = 0; c < this.columns.length; c++) next.columns[c]!.set(this.columns[c]!.subarray(next.filled, copied), next.filled);
      this.fragments.fillAhead(to);
      next.filled = to;
      return 'copied';
    }
    this.columns = next.columns;
    this.fragments.takeGrown();
    const pending = uint8s(next.capacity);
    pending.set(this.pending);
    this.pending = pending;
    this.capacity = next.capacity;
    this.next = undefined;
    return 'taken';
  }

  /** Room for rows below `capacity`, at once (a growth under way is dropped). */
  private grow(capacity: number): void {
    this.next = this.growth(capacity);
    this.finishGrowth();
  }

  /** The growth under way, every step now. */
  private finishGrowth(): void {
    while (this.growStep() !== 'taken');
  }

  private growth(capacity: number): NonNullable<Table<R>['next']> {
    return { capacity, columns: [], fragments: false, filled: 0 };
  }

  private release(row: number): void {
    this.records[row] = undefined;
    this.fragments.forget(row);
    this.freeRows.push(row);
  }
}
