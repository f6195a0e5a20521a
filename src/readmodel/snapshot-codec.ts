/**
 * Records of one kind by the thousand, as columns: the read model's
 * snapshot format (and the tables' indexes saved with it). Consecutive
 * records with the same fields (the same keys in the same order, as a
 * projection makes them) go into one chunk, each field a column: numbers
 * as a Float64Array, booleans as bytes, strings (and nulls) as codes into
 * a dictionary of the chunk's distinct values, anything else (objects,
 * arrays, mixed) as a list of values.
 *
 * Decoding makes each record with one object literal in the field order
 * it was written in, so decoded records have the shape the projections'
 * records have (or, for the model, the shape it stores them in:
 * decodeStoredChunk); a repeated string is one string object per chunk (no
 * interning needed); no per-record decoding of field names or types; a
 * column of 32-bit integers is read as small integers (smallIntegers).
 *
 * Nested values (and fields of mixed types) go through msgpack, which
 * drops an own "__proto__" key and writes -0 as 0, and strings are UTF-8,
 * where a lone surrogate becomes U+FFFD — as with LMDB's msgpack encoding
 * of records before: client-supplied JSON with either would read
 * differently after a restart (-0 and 0 are both 0 in JSON).
 */
import { Packr } from 'msgpackr';
import type { Kind, Records } from '../../projections/records.js';
import { type Layout, layoutOf, microsOf, minutesOf, packedFieldsCode, type Stored, storedKeysOf, timeOf } from './packed-times.js';
import { runThrough } from './pieces.js';
import { type SavedTable, savedTableToSave, type TableToSave } from './table.js';

type Column =
  | { readonly type: 'n'; readonly values: Float64Array }
  /** A number column as decoded when every value is a 32-bit integer (see smallIntegers); never written. */
  | { readonly type: 'i'; readonly values: Int32Array }
  | { readonly type: 'b'; readonly values: Uint8Array }
  /** codes[i]: 0 for null, else 1 + the value's place in dictionary. */
  | { readonly type: 's'; readonly dictionary: readonly string[]; readonly codes: Uint32Array }
  | { readonly type: 'v'; readonly values: readonly unknown[] };

interface Chunk {
  readonly keys: readonly string[];
  readonly count: number;
  readonly columns: readonly Column[];
}

/** Records per chunk, at most. */
export const CHUNK_SIZE = 16_384;
/**
 * Records per chunk, at most, once one of them holds an object or an array: msgpackr packs such values one by one,
 * when the chunk is packed, in one piece of the work (a journal fold's 11,400 form submissions took 57-86 ms).
 */
export const NESTED_CHUNK_SIZE = 2_048;

const packr = new Packr({ useRecords: false, moreTypes: true });

/** Whether the record's own enumerable keys are `keys`, in that order. */
function hasKeys(record: object, keys: readonly string[]): boolean {
  let i = 0;
  for (const key in record) if (key !== keys[i++]) return false;
  return i === keys.length;
}

/** Whether one of the record's values (of those under `keys`, when given) is an object or an array. */
function holdsObjects(record: object, keys?: readonly string[]): boolean {
  const values = record as Record<string, unknown>;
  if (keys) {
    for (const key of keys) if (isObject(values[key])) return true;
  } else {
    for (const key in values) if (isObject(values[key])) return true;
  }
  return false;
}

const isObject = (value: unknown): boolean => value !== null && typeof value === 'object';

/** The records in chunks, in their order: each chunk one buffer, and how many records it holds. */
export function* encodeChunks(records: Iterable<object>): Iterable<{ buffer: Buffer; records: number }> {
  for (const chunk of encodeChunksInPieces(records)) if (chunk !== undefined) yield chunk;
}

/**
 * `encodeChunks`, with `undefined` between pieces of the work, a few milliseconds each (where the caller may let
 * other work run): a chunk of 16,384 records took 16 ms to encode (shifts), 57 ms with nested values (form
 * submissions) on a slow day, each a stall of a server's requests while it folded its journal. Packed into `memory`
 * when given (see PartsMemory), else into msgpackr's own buffers; the columns are made in `room` (a chunk's at a
 * time: they are garbage once it is packed).
 *
 * Records of a kind whose times the model packs (`kind`) may come as the model stores them: they are written as
 * their projections made them (the same chunk), each time read from its two fields, with no record made for it
 * (a rebuild of a million shifts and 450,000 reservations made each of them again to write its snapshot: 0.21 s of
 * one of its two workers' profiles, and their garbage).
 */
export function* encodeChunksInPieces(
  records: Iterable<object>,
  room: Room = new Room(),
  memory?: PartsMemory,
  kind?: Kind,
): Iterable<{ buffer: Buffer; records: number } | undefined> {
  const layout = kind === undefined ? undefined : layoutOf(kind);
  const storedKeys = layout && storedKeysOf(layout);
  // (A stored record's time fields are not its time: one that is not a safe integer is kept in an array.)
  const untimed = layout && layout.fields.filter((field) => !(layout.times as readonly string[]).includes(field));
  let batch: object[] = [];
  /** The batch's records' own keys, and whether they are those of a stored record of the kind's layout. */
  let keys: readonly string[] = [];
  let stored = false;
  /** Whether a record of the batch holds an object or an array. */
  let nested = false;
  const encode = () => encodeChunk(stored ? layout!.fields : keys, batch, room, memory, stored ? layout : undefined);
  let read = 0;
  for (const record of records) {
    // (Each record's keys are read as it is met: a pause every SPLIT_A_PIECE of them, as when they are split.)
    if (++read % SPLIT_A_PIECE === 0) yield undefined;
    const same = hasKeys(record, keys);
    if (batch.length > 0 && (!same || batch.length >= (nested ? NESTED_CHUNK_SIZE : CHUNK_SIZE))) {
      yield { buffer: yield* encode(), records: batch.length };
      batch = [];
      nested = false;
    }
    if (!same) {
      keys = Object.keys(record);
      stored = storedKeys !== undefined && sameKeys(keys, storedKeys);
    }
    batch.push(record);
    nested ||= holdsObjects(record, stored ? untimed : undefined);
  }
  if (batch.length > 0) yield { buffer: yield* encode(), records: batch.length };
}

/** Records split into columns in one piece of encodeChunk, at most. */
const SPLIT_A_PIECE = 1024;

/**
 * A chunk's buffer, made a piece at a time: the records split into columns, each column encoded, then packed. The
 * records are stored ones of `layout` when it is given (`keys` its fields).
 */
function* encodeChunk(keys: readonly string[], records: readonly object[], room: Room, memory: PartsMemory | undefined, layout?: Layout<Kind>): Generator<undefined, Buffer> {
  const split = splitterFor(keys, layout);
  const values = keys.map(() => new Array<unknown>(records.length));
  for (let from = 0; from < records.length; from += SPLIT_A_PIECE) {
    split(records, from, Math.min(records.length, from + SPLIT_A_PIECE), values);
    yield;
  }
  // Each column's typed array in its own part of the room (8 bytes a value at most).
  const arrays = room.atLeast(8 * records.length * keys.length);
  const columns: Column[] = [];
  for (const [c, column] of values.entries()) {
    columns.push(yield* encodeColumn(column, arrays, 8 * records.length * c));
    yield;
  }
  const chunk: Chunk = { keys, count: records.length, columns };
  return memory ? memory.pack(chunk) : packr.pack(chunk);
}

/**
 * Strings coded in one piece of encodeColumn, at most (each a look-up in the dictionary's map, and an entry). With a
 * chunk's column of 16,384 coded in one piece, a server's journal fold after a live import had pieces of up to 29 ms
 * (p99 20 ms: a traced live step on a slow day, yardstick 96 µs), every request waiting meanwhile; with 2,048 a piece,
 * up to 20 ms (p99 14 ms, yardstick 76 µs).
 */
const CODES_A_PIECE = 1024;

/** A column's values encoded, its typed array (if it has one) made in `memory` from `offset` (8n bytes free there). */
function* encodeColumn(values: readonly unknown[], memory: ArrayBuffer, offset: number): Generator<undefined, Column> {
  const n = values.length;
  let numbers = true;
  let booleans = true;
  let strings = true;
  for (let i = 0; i < n && (numbers || booleans || strings); i++) {
    const value = values[i];
    const type = typeof value;
    if (type !== 'number') numbers = false;
    if (type !== 'boolean') booleans = false;
    if (type !== 'string' && value !== null) strings = false;
  }
  if (numbers) {
    const numbers = new Float64Array(memory, offset, n);
    for (let i = 0; i < n; i++) numbers[i] = values[i] as number;
    return { type: 'n', values: numbers };
  }
  if (booleans) {
    const bytes = new Uint8Array(memory, offset, n);
    for (let i = 0; i < n; i++) bytes[i] = values[i] ? 1 : 0;
    return { type: 'b', values: bytes };
  }
  if (strings) {
    const places = new Map<string, number>();
    const dictionary: string[] = [];
    const codes = new Uint32Array(memory, offset, n).fill(0);
    for (let from = 0; from < n; from += CODES_A_PIECE) {
      if (from > 0) yield;
      for (let i = from; i < Math.min(n, from + CODES_A_PIECE); i++) {
        const value = values[i] as string | null;
        if (value === null) continue;
        let place = places.get(value);
        if (place === undefined) {
          place = dictionary.length;
          places.set(value, place);
          dictionary.push(value);
        }
        codes[i] = place + 1;
      }
    }
    return { type: 's', dictionary, codes };
  }
  return { type: 'v', values };
}

/** Reads records `from` to `to` (not included) into `columns`, one array per field, at the records' places. */
type Splitter = (records: readonly object[], from: number, to: number, columns: unknown[][]) => void;
const splitters = new Map<string, Splitter>();

/**
 * A function that reads records of these fields into one array per field,
 * generated once per field list (each field read by name, not by a key
 * computed at run time); for records stored in `layout` (`keys` its fields),
 * each of its times from the two fields it is stored in. Field names enter
 * the code only as JSON string literals.
 */
function splitterFor(keys: readonly string[], layout?: Layout<Kind>): Splitter {
  const times = new Set<string>(layout?.times);
  const signature = `${layout ? 'stored\u0001' : ''}${keys.join('\u0000')}`;
  let splitter = splitters.get(signature);
  if (splitter) return splitter;
  const name = (key: string) => JSON.stringify(key);
  const read = (key: string) => (times.has(key) ? `timeOf(r[${name(`${key}$min`)}], r[${name(`${key}$us`)}])` : `r[${name(key)}]`);
  const body = `${keys.map((_, c) => `const c${c} = columns[${c}];`).join('\n')}
for (let i = from; i < to; i++) {
  const r = records[i];
  ${keys.map((key, c) => `c${c}[i] = ${read(key)};`).join('\n  ')}
}`;
  splitter = (new Function('timeOf', `return (records, from, to, columns) => {\n${body}\n};`) as (t: typeof timeOf) => Splitter)(timeOf);
  splitters.set(signature, splitter);
  return splitter;
}

type Maker = (columns: readonly Column[], count: number) => object[];
const makers = new Map<string, Maker>();

/**
 * A function that makes a chunk's records, generated once per field list
 * and column types: one object literal per record, read straight from the
 * columns; `times`, each as two fields, as the model stores them (see
 * packed-times.ts). Field names enter the code only as JSON string literals.
 */
function makerFor(keys: readonly string[], columns: readonly Column[], times: ReadonlySet<string> = NO_TIMES): Maker {
  const signature = keys.map((key, c) => `${columns[c]!.type}${times.has(key) ? 't' : ''}${key}`).join('\u0000');
  let maker = makers.get(signature);
  if (maker) return maker;
  const setup: string[] = [];
  const fields: string[] = [];
  keys.forEach((key, c) => {
    const column = columns[c]!;
    let value: string;
    if (column.type === 's') {
      setup.push(`const d${c} = columns[${c}].dictionary, k${c} = columns[${c}].codes;`);
      value = `k${c}[i] === 0 ? null : d${c}[k${c}[i] - 1]`;
    } else {
      setup.push(`const v${c} = columns[${c}].values;`);
      value = column.type === 'b' ? `v${c}[i] === 1` : `v${c}[i]`;
    }
    // A time packed as the model stores it (see packed-times.ts), whatever its column (one of nulls only is of strings).
    if (times.has(key)) fields.push(packedFieldsCode(key, value));
    else fields.push(`${JSON.stringify(key)}: ${value}`);
  });
  const body = `${setup.join('\n')}
let m;
const out = new Array(count);
for (let i = 0; i < count; i++) out[i] = { ${fields.join(', ')} };
return out;`;
  maker = (new Function('minutesOf', 'microsOf', `return (columns, count) => {\n${body}\n};`) as (m: typeof minutesOf, u: typeof microsOf) => Maker)(minutesOf, microsOf);
  makers.set(signature, maker);
  return maker;
}

/** A chunk as written, its columns ready to make records from. */
function columnsOf(buffer: Uint8Array): { keys: readonly string[]; columns: Column[]; count: number } {
  const chunk = packr.unpack(buffer) as Chunk;
  return { keys: chunk.keys, columns: chunk.columns.map(smallIntegers), count: chunk.count };
}

/** The records of one chunk, in the order they were written. */
export function decodeChunk(buffer: Uint8Array): object[] {
  const { keys, columns, count } = columnsOf(buffer);
  return makerFor(keys, columns)(columns, count);
}

const NO_TIMES: ReadonlySet<string> = new Set();

/**
 * The records of one chunk of a kind, as the model stores them (`stored`: made so, with no record made first and
 * packed after, when the chunk holds the kind's fields in its layout's order), or as written (`records`).
 */
export function decodeStoredChunk<K extends Kind>(kind: K, buffer: Uint8Array): { stored: Stored<Records[K]>[] } | { records: Records[K][] } {
  const { keys, columns, count } = columnsOf(buffer);
  const layout = layoutOf(kind);
  if (layout === undefined || !sameKeys(keys, layout.fields)) return { records: makerFor(keys, columns)(columns, count) as Records[K][] };
  return { stored: makerFor(keys, columns, new Set(layout.times))(columns, count) as Stored<Records[K]>[] };
}

function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((key, i) => key === b[i]);
}

/**
 * A number column whose values are all 32-bit integers (-0 aside), as an Int32Array: a record made from it holds each
 * as a small integer, in the object itself. Read from a Float64Array, V8 boxes each value in an object of its own (a
 * heap number), and the field then boxes every value stored in it, in every record of that shape: at 1,000,000 shifts
 * the spots and statuses were 2.9M of the heap's 9.0M heap numbers, each one more object for every full collection
 * to mark.
 */
function smallIntegers(column: Column): Column {
  if (column.type !== 'n') return column;
  const { values } = column;
  const n = values.length;
  for (let i = 0; i < n; i++) {
    const value = values[i]!;
    if ((value | 0) !== value || Object.is(value, -0)) return column;
  }
  return { type: 'i', values: Int32Array.from(values) };
}

/**
 * A table's saved form packed, the bytes `packr.pack` makes of the SavedTable it stands for, an array at a time: the
 * generator yields after each array and each piece of a symbol list (the caller may let other work run there) and
 * returns the buffer. Packed into `memory` (see PartsMemory), or else into a buffer made for it, the only view of its
 * memory (which can be transferred to another thread as it is). Each index and column is made in `room` and copied
 * in, so that the table's arrays are never all made beside their packed copy; msgpackr packs the rest (names, symbol
 * values) straight into the buffer. (msgpackr's own buffer grows by copying, twice the size up to 64 MB, then a
 * quarter more, and is kept for the packs after, by every Packr: it is msgpackr's, not an instance's.)
 */
export function* encodeTableInPieces(table: TableToSave, room: Room = new Room(), memory?: PartsMemory): Generator<undefined, Buffer<ArrayBuffer>> {
  // Each column's width first (a pass over its values), for a buffer of the exact size.
  for (const column of table.columns) {
    yield* column.width();
    yield;
  }
  const bound = yield* tableBound(table);
  const out = new PackedTable(memory ? memory.take(bound) : Buffer.allocUnsafeSlow(bound));
  out.mapHeader(3);
  out.pack('symbols');
  const symbols = Object.entries(table.symbols);
  out.mapHeader(symbols.length);
  for (const [name, values] of symbols) {
    out.pack(name);
    out.arrayHeader(values.length);
    for (let i = 0; i < values.length; i += SYMBOLS_A_PIECE) {
      out.packItems(values.slice(i, i + SYMBOLS_A_PIECE));
      out.release();
      yield;
    }
  }
  for (const [part, arrays, field] of [
    ['indexes', table.indexes, 'order'],
    ['columns', table.columns, 'values'],
  ] as const) {
    out.pack(part);
    out.arrayHeader(arrays.length);
    for (const array of arrays) {
      out.mapHeader(3);
      out.pack('name');
      out.pack(array.name);
      out.pack('signature');
      out.pack(array.signature);
      out.pack(field);
      yield* out.typedArray(yield* array.fill(room.atLeast(array.length * (yield* array.width()))));
      out.release();
      yield;
    }
  }
  return out.done();
}

/** A table's saved form packed at once (see encodeTableInPieces). */
export function encodeTable(table: SavedTable): Buffer<ArrayBuffer> {
  return runThrough(encodeTableInPieces(savedTableToSave(table)));
}

/** Symbol values packed in one piece of encodeTableInPieces. */
const SYMBOLS_A_PIECE = 16_384;

/**
 * Memory lent to what is made only to be copied (a table's arrays, a chunk's columns: see encodeTableInPieces and
 * encodeChunksInPieces), used again by the next, grown as they need.
 */
export class Room {
  private memory = new ArrayBuffer(0);

  /** At least `bytes` of memory (what the last call gave, if it is large enough). */
  atLeast(bytes: number): ArrayBuffer {
    if (this.memory.byteLength < bytes) this.memory = new ArrayBuffer(bytes);
    return this.memory;
  }
}

/**
 * Memory a snapshot's parts are packed into, used again once they are written (`recycle`): a fold of the journal
 * packs hundreds of MB of parts (about 350 MB at a million shifts), which, in new memory each time, started a full
 * collection of the whole heap for every 64 MB (V8's rule for memory outside its heap), each a stall of requests.
 * Blocks of `blockBytes`, or one as large as a part that needs more.
 */
export class PartsMemory {
  static blockBytes = 8 * 2 ** 20;
  /**
   * A chunk is packed in a block only with this much of it free (a larger one is packed in memory of its own); at
   * least 4 KB (msgpackr starts a pack only with 2 KB free).
   */
  static packFrom = 2 * 2 ** 20;
  private readonly blocks: Buffer<ArrayBuffer>[] = [];
  /** The block being filled, and the first free byte in it. */
  private block = 0;
  private at = 0;

  /** `bytes` of memory no other part is given until `recycle`. */
  take(bytes: number): Buffer<ArrayBuffer> {
    const block = this.room(bytes);
    const part = block.subarray(this.at, this.at + bytes);
    this.taken(bytes);
    return part;
  }

  /** A value packed by msgpackr into this memory (or, if it outgrows the block, into memory of its own). */
  pack(value: unknown): Buffer {
    const block = this.room(Math.max(PartsMemory.packFrom, 4096));
    packr.useBuffer(block.subarray(this.at));
    const packed = packr.pack(value);
    // Never a buffer another pack writes into (see PackedTable.release).
    packr.useBuffer(Buffer.allocUnsafeSlow(PACK_BUFFER_BYTES));
    if (packed.buffer === block.buffer) this.taken(packed.byteOffset - block.byteOffset - this.at + packed.length);
    return packed;
  }

  /** Every part given so far is written: its memory is given again. */
  recycle(): void {
    this.block = 0;
    this.at = 0;
  }

  /** The first block from the one being filled with `bytes` free (made if there is none), made the one being filled. */
  private room(bytes: number): Buffer<ArrayBuffer> {
    for (;;) {
      const block = this.blocks[this.block];
      if (block === undefined) {
        this.blocks.push(Buffer.allocUnsafeSlow(Math.max(bytes, PartsMemory.blockBytes)));
        this.at = 0;
      } else if (block.length - this.at >= bytes) return block;
      else {
        this.block++;
        this.at = 0;
      }
    }
  }

  /** `bytes` from `at` in the block being filled were given (the next part starts word-aligned). */
  private taken(bytes: number): void {
    this.at = (this.at + bytes + 7) & ~7;
  }
}

/** msgpackr's type codes of the typed arrays a table holds (its `typedArrays` list). */
const TYPED_ARRAY_CODES = new Map<unknown, number>([
  [Int32Array, 5],
  [Uint32Array, 6],
  [Float64Array, 8],
]);

/** A buffer being written as msgpack, front to back. */
/**
 * Bytes of a typed array copied into a packed table in one piece of encodeTableInPieces. Copied into memory written
 * for the first time, a copy costs what the memory's first use costs: on this project's test machines (virtual ones),
 * 16-18 ms for 4 MB, against 0.3 ms for the same copy again; a journal fold's encoding of the benchmark's model,
 * in-process and with no requests, had pieces that ended with such a copy of up to 27.7-30.5 ms.
 */
export const COPIED_A_PIECE = 2 ** 19;

class PackedTable {
  private at = 0;
  /** Whether msgpackr packs into this buffer (see packed). */
  private lent = false;

  constructor(private readonly buffer: Buffer<ArrayBuffer>) {}

  /** A map of `size` entries, as msgpackr starts every object: a map 16 header. */
  mapHeader(size: number): void {
    this.byte(0xde);
    this.uint16(size);
  }

  /** An array of `length` values, as msgpackr starts one (arrayHeaderBytes long). */
  arrayHeader(length: number): void {
    if (length < 0x10) this.byte(0x90 | length);
    else if (length < 0x10000) {
      this.byte(0xdc);
      this.uint16(length);
    } else {
      this.byte(0xdd);
      this.uint32(length);
    }
  }

  /** A value packed by msgpackr. */
  pack(value: unknown): void {
    this.packed(value);
  }

  /** The values of a list, packed by msgpackr as they are in an array (the array's header left out). */
  packItems(values: readonly unknown[]): void {
    this.packed(values, arrayHeaderBytes(values.length));
  }

  /**
   * msgpackr packs into the buffer it is given (never into a shared one) from a word-aligned place at or after the
   * position set: moved down to where the last value ended, its first `skip` bytes left out. It keeps this buffer
   * until `release`.
   */
  private packed(value: unknown, skip = 0): void {
    if (!this.lent) packr.useBuffer(this.buffer);
    this.lent = true;
    packr.position = this.at;
    const bytes = packr.pack(value);
    const from = bytes.byteOffset - this.buffer.byteOffset;
    if (bytes.buffer === this.buffer.buffer) this.buffer.copyWithin(this.at, from + skip, from + bytes.length);
    else {
      // Outside this buffer only if the bound was wrong (`set` then throws rather than write past its end); msgpackr
      // has a buffer of its own then.
      this.lent = false;
      this.buffer.set(bytes.subarray(skip), this.at);
    }
    this.at += bytes.length - skip;
  }

  /**
   * Give msgpackr a new buffer of its own, so that no pack but this table's writes into this buffer (before each
   * pause: other packs may run there, lmdb-js's among them; a buffer msgpackr had may still hold what they packed).
   */
  release(): void {
    if (this.lent) packr.useBuffer(Buffer.allocUnsafeSlow(PACK_BUFFER_BYTES));
    this.lent = false;
  }

  /** A typed array as msgpackr packs one with `moreTypes`: an extension ("t", the array's type code, its bytes). */
  *typedArray(values: Uint32Array | Int32Array | Float64Array): Generator<undefined, void> {
    const length = values.byteLength + 1; // with the type code
    if (length < 0x100) {
      this.byte(0xc7);
      this.byte(length);
    } else if (length < 0x10000) {
      this.byte(0xc8);
      this.uint16(length);
    } else {
      this.byte(0xc9);
      this.uint32(length);
    }
    this.byte(0x74);
    this.byte(TYPED_ARRAY_CODES.get(values.constructor)!);
    const bytes = new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
    for (let from = 0; from < bytes.length; from += COPIED_A_PIECE) {
      if (from > 0) yield;
      this.buffer.set(bytes.subarray(from, from + COPIED_A_PIECE), this.at + from);
    }
    this.at += values.byteLength;
  }

  /** The buffer, once every byte is written: as long as what was written. */
  done(): Buffer<ArrayBuffer> {
    this.release();
    return this.at === this.buffer.length ? this.buffer : this.buffer.subarray(0, this.at);
  }

  private byte(value: number): void {
    this.buffer[this.at++] = value;
  }

  private uint16(value: number): void {
    this.buffer.writeUInt16BE(value, this.at);
    this.at += 2;
  }

  private uint32(value: number): void {
    this.buffer.writeUInt32BE(value, this.at);
    this.at += 4;
  }
}

/** The bytes of an array's header as msgpackr writes it (fixarray, array 16, array 32). */
function arrayHeaderBytes(length: number): number {
  return length < 0x10 ? 1 : length < 0x10000 ? 3 : 5;
}

/**
 * The buffer msgpackr is given after packing into a part's (it grows it as the packs after need): as small as the one
 * it starts with, as a fold gives it one for each piece of its work.
 */
const PACK_BUFFER_BYTES = 8 * 1024;

/**
 * At least the bytes `encodeTableInPieces` writes for `table` (its columns' widths settled), with the room msgpackr
 * wants to pack the rest in place (it starts a pack only with 2 KB free, from a word-aligned place, and leaves 10
 * bytes at the end; it packs a string only with 3 bytes a UTF-16 unit free): a symbol value its UTF-8 bytes and a
 * header of at most 5 (with room for the longest at 3 bytes a unit), another string 3 bytes a unit and a header of
 * 5, an array header 5, a typed array its bytes and a header of 7, an object's keys (a few short ones) within 32
 * bytes. A generator: it yields after each piece of a symbol list (its values measured one by one: at a million
 * shifts, the largest reservation table's bound was 51 MB at 3 bytes a unit, where it packs into 32).
 */
function* tableBound(table: TableToSave): Generator<undefined, number> {
  const text = (value: string) => value.length * 3 + 5;
  let bytes = 4096;
  let longest = 0;
  for (const [name, values] of Object.entries(table.symbols)) {
    bytes += text(name) + 5;
    for (let i = 0; i < values.length; i += SYMBOLS_A_PIECE) {
      for (let k = i; k < Math.min(values.length, i + SYMBOLS_A_PIECE); k++) {
        const value = values[k]!;
        bytes += Buffer.byteLength(value) + 5;
        if (value.length > longest) longest = value.length;
      }
      yield;
    }
  }
  for (const array of [...table.indexes, ...table.columns]) bytes += 32 + text(array.name) + text(array.signature) + array.length * (yield* array.width()) + 7;
  return bytes + 3 * longest;
}

/** The bound `encodeTableInPieces` packs `table` in (see tableBound), at once. */
export function encodedTableBound(table: TableToSave): number {
  return runThrough(tableBound(table));
}

export function decodeTable(buffer: Uint8Array): SavedTable {
  return packr.unpack(buffer) as SavedTable;
}
