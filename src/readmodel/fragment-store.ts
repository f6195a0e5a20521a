/**
 * The JSON of a table's rows as responses show them, each made once per
 * version of the row and of what it nests, kept side by side in large
 * append-only chunks of memory, each followed by a comma.
 *
 * A page is then copied in a few large runs instead of a small buffer per
 * row: rows first shown together (the page they were first asked for) lie
 * next to each other, so that page is one run, and "a,b,c," with its last
 * comma made a `]` is the JSON array. No object per fragment: a million
 * rows cost four typed arrays, not a million buffers for the garbage
 * collector to trace.
 *
 * Bytes once written are never overwritten (a new version is appended), so
 * a view of a chunk handed out stays valid. A chunk that is mostly stale
 * versions is reclaimed by starting over: when the stale bytes outweigh the
 * live ones, every fragment is forgotten and made again when next asked for.
 */

const COMMA = 0x2c;

export interface FragmentStoreSizes {
  /** The first chunk's size; each next one is twice the last, up to maxChunk (a larger fragment gets a chunk of its size). */
  readonly minChunk: number;
  readonly maxChunk: number;
  /** Stale bytes tolerated before starting over, beyond as many as there are live ones. */
  readonly slack: number;
}

const SIZES: FragmentStoreSizes = { minChunk: 1 << 14, maxChunk: 1 << 22, slack: 1 << 20 };

export class FragmentStore {
  private chunks: Buffer[] = [];
  private current: Buffer = Buffer.alloc(0);
  private used = 0;
  /** Per row: its fragment's chunk (-1: none), offset and length (with the comma), and the stamp it was made at. */
  private chunkOf: Int32Array;
  private offsetOf: Int32Array;
  private lengthOf: Int32Array;
  private stamps: Float64Array;
  private liveBytes = 0;
  private allBytes = 0;
  /** Moves whenever everything is forgotten. */
  private startedOver = 0;

  constructor(
    capacity: number,
    private readonly sizes = SIZES,
  ) {
    this.chunkOf = new Int32Array(capacity).fill(-1);
    this.offsetOf = new Int32Array(capacity);
    this.lengthOf = new Int32Array(capacity);
    this.stamps = new Float64Array(capacity);
  }

  /** Room for rows below `capacity`. */
  grow(capacity: number): void {
    const grown = <A extends Int32Array | Float64Array>(old: A, make: (n: number) => A) => {
      const next = make(capacity);
      next.set(old);
      return next;
    };
    const before = this.chunkOf.length;
    this.chunkOf = grown(this.chunkOf, (n) => new Int32Array(n));
    this.chunkOf.fill(-1, before);
    this.offsetOf = grown(this.offsetOf, (n) => new Int32Array(n));
    this.lengthOf = grown(this.lengthOf, (n) => new Int32Array(n));
    this.stamps = grown(this.stamps, (n) => new Float64Array(n));
  }

  /** The row no longer holds this version (freed or replaced): its fragment is stale. */
  forget(row: number): void {
    if (this.chunkOf[row] === -1) return;
    this.chunkOf[row] = -1;
    this.liveBytes -= this.lengthOf[row]!;
  }

  /**
   * The fragments of `rows` in order, each followed by a comma, as few
   * views of the chunks as they lie in (a run of rows stored one after the
   * other is one view). A row not made at `stamp` is made with `json`.
   */
  runs(rows: readonly number[], stamp: number, json: (row: number) => string): Buffer[] {
    const generation = this.startedOver;
    for (let i = 0; i < rows.length; i++) this.ensure(rows[i]!, stamp, json);
    // Made first, then read: making one may have started over, forgetting those made before.
    if (generation !== this.startedOver) return rows.map((row) => this.view(row, 0, json, stamp));
    const out: Buffer[] = [];
    let chunk = -1;
    let from = 0;
    let to = 0;
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i]!;
      const c = this.chunkOf[row]!;
      const offset = this.offsetOf[row]!;
      if (c === chunk && offset === to) {
        to += this.lengthOf[row]!;
        continue;
      }
      if (chunk !== -1) out.push(this.chunks[chunk]!.subarray(from, to));
      chunk = c;
      from = offset;
      to = offset + this.lengthOf[row]!;
    }
    if (chunk !== -1) out.push(this.chunks[chunk]!.subarray(from, to));
    return out;
  }

  /** One row's fragment, without its comma. */
  one(row: number, stamp: number, json: (row: number) => string): Buffer {
    return this.view(row, 1, json, stamp);
  }

  private view(row: number, trim: number, json: (row: number) => string, stamp: number): Buffer {
    this.ensure(row, stamp, json);
    const offset = this.offsetOf[row]!;
    return this.chunks[this.chunkOf[row]!]!.subarray(offset, offset + this.lengthOf[row]! - trim);
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
    if (this.chunkOf[row] !== -1 && this.stamps[row] === stamp) return;
    const text = json(row);
    const length = Buffer.byteLength(text) + 1;
    if (this.used + length > this.current.length) this.newChunk(length);
    this.current.write(text, this.used);
    this.current[this.used + length - 1] = COMMA;
    this.forget(row);
    this.chunkOf[row] = this.chunks.length - 1;
    this.offsetOf[row] = this.used;
    this.lengthOf[row] = length;
    this.stamps[row] = stamp;
    this.used += length;
    this.liveBytes += length;
    this.allBytes += length;
  }

  private newChunk(atLeast: number): void {
    const { minChunk, maxChunk, slack } = this.sizes;
    if (this.allBytes - this.liveBytes > this.liveBytes + slack) {
      // Mostly stale: forget everything (views handed out keep their chunks alive).
      this.chunkOf.fill(-1);
      this.chunks = [];
      this.liveBytes = 0;
      this.allBytes = 0;
      this.startedOver++;
    }
    const size = Math.max(atLeast, Math.min(maxChunk, Math.max(minChunk, this.current.length * 2)));
    this.current = Buffer.allocUnsafeSlow(size);
    this.chunks.push(this.current);
    this.used = 0;
  }
}
