/**
 * The JSON of a table's rows as responses show them, each made once per
 * version of the row and of what it nests, kept side by side in large
 * append-only chunks of memory, each followed by a comma.
 *
 * A page is then copied in a few large runs instead of a small buffer per
 * row: rows first shown together (the page they were first asked for) lie
 * next to each other, so that page is one run, and "a,b,c," with its last
 * comma made a `]` is the JSON array. No object per fragment: a row costs
 * an entry of 24 bytes, not a buffer for the garbage collector to trace.
 *
 * Bytes once written are never overwritten (a new version is appended), so
 * a view of a chunk handed out stays valid. A chunk that is mostly stale
 * versions is reclaimed by starting over: when the stale bytes outweigh the
 * live ones, or all of them reach the budget, every fragment is forgotten and
 * made again when next asked for.
 */

const COMMA = 0x2c;

export interface FragmentStoreSizes {
  /** The first chunk's size; each next one is twice the last, up to maxChunk (a larger fragment gets a chunk of its size). */
  readonly minChunk: number;
  readonly maxChunk: number;
  /** Stale bytes tolerated before starting over, beyond as many as there are live ones. */
  readonly slack: number;
  /** Bytes held at most: past them, everything is forgotten too (a cache of what was shown, not a copy of the table). */
  readonly budget: number;
}

/** 64 MB a table at most: a random mix over 500,000 shifts would otherwise keep the JSON of each shift ever shown (~0.5 GB). */
const SIZES: FragmentStoreSizes = { minChunk: 1 << 14, maxChunk: 1 << 22, slack: 1 << 20, budget: 1 << 26 };

/**
 * Per row, 24 bytes side by side (one cache line to read a row's entry, not
 * one per field): the stamp its fragment was made at (float64), then its
 * chunk (-1: none), offset and length with the comma (int32 each).
 */
const ENTRY_BYTES = 24;
const F64_PER_ENTRY = ENTRY_BYTES / 8;
const I32_PER_ENTRY = ENTRY_BYTES / 4;
const CHUNK = 2;
const OFFSET = 3;
const LENGTH = 4;

export class FragmentStore {
  private chunks: Buffer[] = [];
  private current: Buffer = Buffer.alloc(0);
  private used = 0;
  /** The rows' entries, as float64s (the stamp) and as int32s (the rest), over the same memory. */
  private stamps!: Float64Array;
  private ints!: Int32Array;
  private capacity = 0;
  private liveBytes = 0;
  private allBytes = 0;
  /** Moves whenever everything is forgotten. */
  private startedOver = 0;

  constructor(
    capacity: number,
    private readonly sizes = SIZES,
  ) {
    this.grow(capacity);
  }

  /** Room for rows below `capacity`. */
  grow(capacity: number): void {
    const memory = new ArrayBuffer(capacity * ENTRY_BYTES);
    if (this.ints) new Int32Array(memory).set(this.ints);
    this.stamps = new Float64Array(memory);
    this.ints = new Int32Array(memory);
    for (let row = this.capacity; row < capacity; row++) this.ints[row * I32_PER_ENTRY + CHUNK] = -1;
    this.capacity = capacity;
  }

  /** The row no longer holds this version (freed or replaced): its fragment is stale. */
  forget(row: number): void {
    const at = row * I32_PER_ENTRY;
    if (this.ints[at + CHUNK] === -1) return;
    this.ints[at + CHUNK] = -1;
    this.liveBytes -= this.ints[at + LENGTH]!;
  }

  /**
   * The fragments of `rows` in order, each followed by a comma, as few
   * views of the chunks as they lie in (a run of rows stored one after the
   * other is one view). A row not made at `stamp` is made with `json`.
   */
  runs(rows: readonly number[], stamp: number, json: (row: number) => string): Buffer[] {
    const generation = this.startedOver;
    for (let i = 0; i < rows.length; i++) this.ensure(rows[i]!, stamp, json);
    // Made first, then read: making one may have started over, forgetting
    // those made before it; they are made again (with nothing stale left,
    // that cannot start over a second time).
    if (generation !== this.startedOver) return this.runs(rows, stamp, json);
    const out: Buffer[] = [];
    let chunk = -1;
    let from = 0;
    let to = 0;
    const ints = this.ints;
    for (let i = 0; i < rows.length; i++) {
      const at = rows[i]! * I32_PER_ENTRY;
      const c = ints[at + CHUNK]!;
      const offset = ints[at + OFFSET]!;
      if (c === chunk && offset === to) {
        to += ints[at + LENGTH]!;
        continue;
      }
      if (chunk !== -1) out.push(this.chunks[chunk]!.subarray(from, to));
      chunk = c;
      from = offset;
      to = offset + ints[at + LENGTH]!;
    }
    if (chunk !== -1) out.push(this.chunks[chunk]!.subarray(from, to));
    return out;
  }

  /** One row's fragment, without its comma. */
  one(row: number, stamp: number, json: (row: number) => string): Buffer {
    this.ensure(row, stamp, json);
    const at = row * I32_PER_ENTRY;
    const offset = this.ints[at + OFFSET]!;
    return this.chunks[this.ints[at + CHUNK]!]!.subarray(offset, offset + this.ints[at + LENGTH]! - 1);
  }

  /** How many times everything was forgotten to reclaim stale bytes. */
  get generation(): number {
    return this.startedOver;
  }

  /** Bytes held for fragments: of their current versions, and in all. */
  get bytes(): { live: number; all: number } {
    return { live: this.liveBytes, all: this.allBytes };
  }

  private ensure(row: number, stamp: number, json: (row: number) => string): void {
    const at = row * I32_PER_ENTRY;
    if (this.ints[at + CHUNK] !== -1 && this.stamps[row * F64_PER_ENTRY] === stamp) return;
    const text = json(row);
    const length = Buffer.byteLength(text) + 1;
    if (this.used + length > this.current.length) this.newChunk(length);
    this.current.write(text, this.used);
    this.current[this.used + length - 1] = COMMA;
    this.forget(row);
    this.ints[at + CHUNK] = this.chunks.length - 1;
    this.ints[at + OFFSET] = this.used;
    this.ints[at + LENGTH] = length;
    this.stamps[row * F64_PER_ENTRY] = stamp;
    this.used += length;
    this.liveBytes += length;
    this.allBytes += length;
  }

  private newChunk(atLeast: number): void {
    const { minChunk, maxChunk, slack, budget } = this.sizes;
    const size = Math.max(atLeast, Math.min(maxChunk, Math.max(minChunk, this.current.length * 2)));
    if (this.allBytes - this.liveBytes > this.liveBytes + slack || this.allBytes + size > budget) {
      // Mostly stale, or as much as a table may hold: forget everything (views handed out keep their chunks alive).
      for (let row = 0; row < this.capacity; row++) this.ints[row * I32_PER_ENTRY + CHUNK] = -1;
      this.chunks = [];
      this.liveBytes = 0;
      this.allBytes = 0;
      this.startedOver++;
    }
    this.current = Buffer.allocUnsafeSlow(size);
    this.chunks.push(this.current);
    this.used = 0;
  }
}
