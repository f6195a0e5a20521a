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
 * records have; a repeated string is one string object per chunk (no
 * interning needed); no per-record decoding of field names or types.
 *
 * Nested values (and fields of mixed types) go through msgpack, which
 * drops an own "__proto__" key and writes -0 as 0, and strings are UTF-8,
 * where a lone surrogate becomes U+FFFD — as with LMDB's msgpack encoding
 * of records before: client-supplied JSON with either would read
 * differently after a restart (-0 and 0 are both 0 in JSON).
 */
import { Packr } from 'msgpackr';
import type { SavedTable } from './table.js';

type Column =
  | { readonly type: 'n'; readonly values: Float64Array }
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

const packr = new Packr({ useRecords: false, moreTypes: true });

/** Whether the record's own enumerable keys are `keys`, in that order. */
function hasKeys(record: object, keys: readonly string[]): boolean {
  let i = 0;
  for (const key in record) if (key !== keys[i++]) return false;
  return i === keys.length;
}

/** The records in chunks, in their order: each chunk one buffer, and how many records it holds. */
export function* encodeChunks(records: Iterable<object>): Iterable<{ buffer: Buffer; records: number }> {
  let batch: object[] = [];
  let keys: readonly string[] = [];
  for (const record of records) {
    const same = hasKeys(record, keys);
    if (batch.length > 0 && (!same || batch.length === CHUNK_SIZE)) {
      yield { buffer: encodeChunk(keys, batch), records: batch.length };
      batch = [];
    }
    if (!same) keys = Object.keys(record);
    batch.push(record);
  }
  if (batch.length > 0) yield { buffer: encodeChunk(keys, batch), records: batch.length };
}

function encodeChunk(keys: readonly string[], records: readonly object[]): Buffer {
  const values = splitterFor(keys)(records);
  const chunk: Chunk = { keys, count: records.length, columns: values.map(encodeColumn) };
  return packr.pack(chunk);
}

function encodeColumn(values: readonly unknown[]): Column {
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
  if (numbers) return { type: 'n', values: Float64Array.from(values as number[]) };
  if (booleans) return { type: 'b', values: Uint8Array.from(values as boolean[], (v) => (v ? 1 : 0)) };
  if (strings) {
    const places = new Map<string, number>();
    const dictionary: string[] = [];
    const codes = new Uint32Array(n);
    for (let i = 0; i < n; i++) {
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
    return { type: 's', dictionary, codes };
  }
  return { type: 'v', values };
}

type Splitter = (records: readonly object[]) => unknown[][];
const splitters = new Map<string, Splitter>();

/**
 * A function that reads records of these fields into one array per field,
 * generated once per field list (each field read by name, not by a key
 * computed at run time). Field names enter the code only as JSON string
 * literals.
 */
function splitterFor(keys: readonly string[]): Splitter {
  const signature = keys.join('\u0000');
  let splitter = splitters.get(signature);
  if (splitter) return splitter;
  const names = keys.map((key) => JSON.stringify(key));
  const body = `const n = records.length;
${names.map((_, c) => `const c${c} = new Array(n);`).join('\n')}
for (let i = 0; i < n; i++) {
  const r = records[i];
  ${names.map((name, c) => `c${c}[i] = r[${name}];`).join('\n  ')}
}
return [${names.map((_, c) => `c${c}`).join(', ')}];`;
  splitter = new Function('records', body) as Splitter;
  splitters.set(signature, splitter);
  return splitter;
}

type Maker = (columns: readonly Column[], count: number) => object[];
const makers = new Map<string, Maker>();

/**
 * A function that makes a chunk's records, generated once per field list
 * and column types: one object literal per record, read straight from the
 * columns. Field names enter the code only as JSON string literals.
 */
function makerFor(keys: readonly string[], columns: readonly Column[]): Maker {
  const signature = keys.map((key, c) => `${columns[c]!.type}${key}`).join('\u0000');
  let maker = makers.get(signature);
  if (maker) return maker;
  const setup: string[] = [];
  const fields: string[] = [];
  keys.forEach((key, c) => {
    const column = columns[c]!;
    const name = JSON.stringify(key);
    if (column.type === 's') {
      setup.push(`const d${c} = columns[${c}].dictionary, k${c} = columns[${c}].codes;`);
      fields.push(`${name}: k${c}[i] === 0 ? null : d${c}[k${c}[i] - 1]`);
    } else {
      setup.push(`const v${c} = columns[${c}].values;`);
      fields.push(column.type === 'b' ? `${name}: v${c}[i] === 1` : `${name}: v${c}[i]`);
    }
  });
  const body = `${setup.join('\n')}
const out = new Array(count);
for (let i = 0; i < count; i++) out[i] = { ${fields.join(', ')} };
return out;`;
  maker = new Function('columns', 'count', body) as Maker;
  makers.set(signature, maker);
  return maker;
}

/** The records of one chunk, in the order they were written. */
export function decodeChunk(buffer: Uint8Array): object[] {
  const chunk = packr.unpack(buffer) as Chunk;
  return makerFor(chunk.keys, chunk.columns)(chunk.columns, chunk.count);
}

/**
 * A table's indexes and symbol codes as saved with the snapshot, packed into a buffer made for it (the only view of
 * its memory, which can be transferred to another thread as it is). msgpackr's own
 * buffer grows by copying (twice the size up to 64 MB, then a quarter more) and is kept for the packs after (by
 * every Packr: the buffer is msgpackr's, not an instance's), which start a new one as large when it is full: a table
 * of 69 MB (a million shifts' largest institution) left about 120 MB of buffers outgrown and an 80 MB one behind.
 */
export function encodeTable(table: SavedTable): Buffer<ArrayBuffer> {
  packr.useBuffer(Buffer.allocUnsafeSlow(encodedTableBound(table)));
  // (msgpackr packs into the buffer given, or one it makes: never a shared one)
  const encoded = packr.pack(table) as Buffer<ArrayBuffer>;
  packr.useBuffer(Buffer.allocUnsafeSlow(PACK_BUFFER_BYTES));
  return encoded;
}

/** The buffer the packs after a table's start in (msgpackr grows it as they need). */
const PACK_BUFFER_BYTES = 64 * 1024;

/**
 * At least the bytes `encodeTable` writes for `table`, with the room msgpackr wants (it starts a pack only with 2 KB
 * free, and leaves 10 bytes at the end): a string at most 3 bytes a UTF-16 unit and a header of 5, a typed array
 * its bytes and a header of 7, an object's keys (a few short ones) within 32 bytes.
 */
export function encodedTableBound(table: SavedTable): number {
  const text = (value: string) => value.length * 3 + 5;
  const typed = (values: ArrayBufferView) => values.byteLength + 7;
  let bytes = 4096;
  for (const [name, values] of Object.entries(table.symbols)) {
    bytes += text(name) + 5;
    for (const value of values) bytes += text(value);
  }
  for (const { name, signature, order } of table.indexes) bytes += 32 + text(name) + text(signature) + typed(order);
  for (const { name, signature, values } of table.columns ?? []) bytes += 32 + text(name) + text(signature) + typed(values);
  return bytes;
}

export function decodeTable(buffer: Uint8Array): SavedTable {
  return packr.unpack(buffer) as SavedTable;
}
