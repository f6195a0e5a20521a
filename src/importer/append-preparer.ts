/**
 * The thread that prepares an import's appends to the embedded log (prepared-appends.ts drives it). It reads the
 * spool's file and makes each chunk's events into the bytes the log stores (stored-event.ts) while the import's
 * thread writes the chunk before, and keeps their stream entries, which it hands on in the order of their keys and
 * as the log's key bytes (ordered-binary's, as lmdb-js writes them) every `indexEvery` events and at the end. The
 * import's thread is left only LMDB's puts: at 1.77M events, of its 8.5 s after the check, reading the spool back
 * (with each stream's next revision, now counted during the check) had taken 1.65 s, making each stored event
 * 0.54 s, and sorting and encoding the stream entries 1.9 s.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { writeKey } from 'ordered-binary';
import { inKeyOrder } from '../eventstore/key-order.js';
import { type KeyedPositions, nthStart } from '../eventstore/port.js';
import { storedEventMost, writeStoredEvent } from '../eventstore/stored-event.js';
import type { PreparedChunk, PreparerJob, PreparerMessage } from './prepared-appends.js';
import { spooled } from './spool.js';

/** An event's stream entry, as sorted: its stream and revision (the key order's), and which event it is. */
interface Entry {
  readonly stream: string;
  readonly revision: number;
  /** The event's index among those prepared since the entries were last handed on. */
  readonly k: number;
}

const job = workerData as PreparerJob;
const port = parentPort!;

/** Chunks the import's thread has room for (it says when it has taken one). */
let credits = job.ahead;
let wake: (() => void) | undefined;
port.on('message', () => {
  credits++;
  wake?.();
});
const credit = async () => {
  while (credits === 0) await new Promise<void>((resolve) => (wake = resolve));
  wake = undefined;
  credits--;
};

/** Bytes written one after another, each ending at its `ends`; growing as they come. */
class Written {
  bytes = Buffer.allocUnsafeSlow(1 << 20);
  ends = new Uint32Array(1 << 14);
  count = 0;
  used = 0;

  /** Room for `most` more bytes and one more end. */
  room(most: number): Uint8Array {
    if (this.bytes.length - this.used < most) {
      // (In whole words: ordered-binary's DataView over a buffer rounds its length up to one.)
      const more = Buffer.allocUnsafeSlow(Math.ceil(Math.max(2 * this.bytes.length, this.used + most) / 4) * 4);
      this.bytes.copy(more, 0, 0, this.used);
      this.bytes = more;
    }
    if (this.count === this.ends.length) {
      const more = new Uint32Array(2 * this.ends.length);
      more.set(this.ends);
      this.ends = more;
    }
    return this.bytes;
  }

  ended(at: number): void {
    this.used = at;
    this.ends[this.count++] = at;
  }

  /** The bytes at each of `order`'s indexes, one after another in that order, with the positions they name (copied: no view made a key). */
  gathered(order: readonly number[], positions: Float64Array): KeyedPositions {
    const { bytes, ends: written } = this;
    let size = 0;
    for (const i of order) size += written[i]! - nthStart(written, i);
    const keys = Buffer.allocUnsafeSlow(size);
    const ends = new Uint32Array(order.length);
    let at = 0;
    order.forEach((i, j) => (ends[j] = at += bytes.copy(keys, at, nthStart(written, i), written[i])));
    return { keys, ends, positions };
  }

  clear(): void {
    this.count = 0;
    this.used = 0;
  }
}

/** The most bytes a key takes (LMDB's keys are at most 1,978), with room for ordered-binary's padding. */
const KEY_MOST = 4096;

function handOn(message: PreparerMessage, transfer: ArrayBuffer[] = []): void {
  port.postMessage(message, transfer);
}

/** Since the entries were last handed on: each event's stream entry, its keys, and the position of the first. */
let entries: Entry[] = [];
const streamKeys = new Written();
const idKeys = new Written();
/** Of each event past its stream's first, which of `idKeys` is its. */
let idOf: number[] = [];
let firstPosition = job.firstPosition;

/** The entries of the events prepared since the last time, in key order, in slices. */
function handOnEntries(): void {
  const n = entries.length;
  if (n === 0) return;
  const { ordered, exact } = inKeyOrder(entries);
  const from = firstPosition;
  const through = from + n - 1;
  for (let start = 0; start < n; start += job.slice) {
    const slice = ordered.slice(start, start + job.slice);
    const order = slice.map((e) => e.k);
    const streams = { ...streamKeys.gathered(order, Float64Array.from(order, (k) => from + k)), exact };
    // A stream's revisions past its first, in the same order (their keys ordered near it: by stream, then revision).
    const later = order.filter((k) => idOf[k] !== -1);
    const ids = idKeys.gathered(
      later.map((k) => idOf[k]!),
      Float64Array.from(later, (k) => from + k),
    );
    const last = start + job.slice >= n;
    const buffers = [streams, ids].flatMap((k) => [k.keys.buffer, k.ends.buffer, k.positions.buffer] as ArrayBuffer[]);
    handOn({ kind: 'entries', from, through, last, streams, ids }, buffers);
  }
  firstPosition = through + 1;
  entries = [];
  idOf = [];
  streamKeys.clear();
  idKeys.clear();
}

const values = new Written();
/** The chunk made so far, handed on (its buffers go with it). */
function handOnChunk(last: PreparedChunk['last'] | undefined): void {
  if (values.count === 0) return;
  const bytes = values.bytes.subarray(0, values.used);
  const ends = values.ends.subarray(0, values.count);
  // (The next chunk's as big: the buffers handed on are gone from here.)
  const next = { bytes: Buffer.allocUnsafeSlow(values.bytes.length), ends: new Uint32Array(values.ends.length) };
  handOn({ kind: 'chunk', values: bytes, ends, last: last! }, [bytes.buffer as ArrayBuffer, ends.buffer as ArrayBuffer]);
  Object.assign(values, next);
  values.clear();
}

let index = job.from;
/**
 * The first chunk a tenth of the others: the import's thread waits for it (at 100,000 events, some 0.3 s of an import
 * of 1.77M), and for no other while it writes the one before.
 */
let chunk = Math.ceil(job.chunk / 10);
let unfit = false;
let last: PreparedChunk['last'] | undefined;
await credit();
for (const { stream, id, type, revision, data } of spooled(job.file, job.from)) {
  const out = values.room(storedEventMost(data.length));
  const end = writeStoredEvent(out, values.used, job.envelope, id, type, stream, revision, data);
  if (end < 0) {
    // Not one these bytes hold: the import appends it, and the rest, its other way.
    unfit = true;
    break;
  }
  values.ended(end);
  last = { stream, id, revision };
  const k = entries.length;
  entries.push({ stream, revision, k });
  streamKeys.ended(writeKey([stream, revision], streamKeys.room(KEY_MOST), streamKeys.used));
  if (revision > 0) {
    idOf.push(idKeys.count);
    idKeys.ended(writeKey([stream, id], idKeys.room(KEY_MOST), idKeys.used));
  } else idOf.push(-1);
  index++;
  if (values.count === chunk) {
    handOnChunk(last);
    chunk = job.chunk;
    if (entries.length >= job.indexEvery) handOnEntries();
    await credit();
  }
}
handOnChunk(last);
handOnEntries();
handOn(unfit ? { kind: 'unfit', at: index } : { kind: 'end' });
