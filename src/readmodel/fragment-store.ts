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
 * The chunks belong to an arena every table of the process shares, with
 * one budget (FRAGMENT_CACHE_MB): when the chunks would pass it, the oldest
 * go, and the fragments in them (stale versions first of all: they are
 * never read again) are made again when next asked for.
 *
 * The chunks are plain memory, written again once they have left the arena
 * (FragmentArena.reuse): the random mix's pages took 14-15 µs a query to
 * copy out of shared memory, 7.6-8.9 µs out of plain memory (the envelope
 * stage of bench/engine.ts). So the views handed out (a page's runs) are valid until
 * fragments are next made: a page's runs are copied into its body at once,
 * and one row's fragment is given as a copy. Written again, a chunk is never
 * memory V8 has not counted yet, so the arena turning over starts no
 * collection (see big-arrays.ts); filling it to its budget the first time
 * starts one per 64 MB, as any memory does.
 */
import { int32s } from '../big-arrays.js';

const COMMA = 0x2c;

export interface FragmentArenaSizes {
  /** The first chunk's size; each next one is twice the last, up to maxChunk (a larger fragment gets a chunk of its size). */
  readonly minChunk: number;
  readonly maxChunk: number;
  /** Bytes the chunks hold at most (the newest chunk stays, whatever its size). */
  readonly budget: number;
}

/** 256 MB unless FRAGMENT_CACHE_MB says otherwise: about 300,000 shifts' JSON. */
export const DEFAULT_FRAGMENT_BUDGET = 256 * 2 ** 20;

/** Chunks of fragments, oldest first, held within a budget. A chunk has an id for good; ids below `oldest` are gone. */
export class FragmentArena {
  private readonly chunks: Buffer[] = [];
  /** The id of chunks[0]. */
  private first = 0;
  private held = 0;
  private used = 0;
  /** Chunks of the largest size that left the arena since fragments were last asked for: views of them may be held until then. */
  private leaving: Buffer[] = [];
  /** Chunks of the largest size that left the arena before that, to be written again. */
  private spare: Buffer[] = [];

  constructor(private sizes: FragmentArenaSizes = { minChunk: 1 << 16, maxChunk: 1 << 22, budget: DEFAULT_FRAGMENT_BUDGET }) {}

  /** A new budget, in bytes (applied as chunks are next added). */
  setBudget(budget: number): void {
    this.sizes = { ...this.sizes, budget };
  }

  /** The lowest id of a chunk still held. */
  get oldest(): number {
    return this.first;
  }

  /** Bytes held in chunks. */
  get bytes(): number {
    return this.held;
  }

  /** The chunk of this id; only for ids at or above `oldest`. */
  chunk(id: number): Buffer {
    return this.chunks[id - this.first]!;
  }

  /**
   * Fragments are asked for again: views of the chunks handed out before are done with (copied), so the chunks that
   * left the arena since may be written again. Called at the start of each `FragmentStore.runs` and `one`.
   */
  reuse(): void {
    if (this.leaving.length === 0) return;
    for (const chunk of this.leaving) if (this.spare.length < MAX_SPARE) this.spare.push(chunk);
    this.leaving = [];
  }

  /**
   * Write `text` and a comma after it: where (the chunk's id and the
   * offset) and its length with the comma.
   */
  write(text: string): { id: number; offset: number; length: number } {
    // A UTF-16 code unit is at most 3 bytes of UTF-8: room for that, and the bytes written are counted by the write.
    const most = text.length * 3 + 1;
    let current = this.chunks[this.chunks.length - 1];
    if (current === undefined || this.used + most > current.length) current = this.addChunk(most);
    const offset = this.used;
    const written = current.write(text, offset);
    current[offset + written] = COMMA;
    this.used += written + 1;
    return { id: this.first + this.chunks.length - 1, offset, length: written + 1 };
  }

  private addChunk(atLeast: number): Buffer {
    const { minChunk, maxChunk, budget } = this.sizes;
    const last = this.chunks[this.chunks.length - 1];
    const size = Math.max(atLeast, Math.min(maxChunk, Math.max(minChunk, (last?.length ?? 0) * 2)));
    while (this.chunks.length > 0 && this.held + size > budget) {
      const gone = this.chunks.shift()!;
      this.held -= gone.length;
      this.first++;
      if (gone.length === maxChunk) this.leaving.push(gone);
    }
    const chunk = (size === maxChunk ? this.spare.pop() : undefined) ?? Buffer.alloc(size);
    this.chunks.push(chunk);
    this.held += size;
    this.used = 0;
    return chunk;
  }
}

/**
 * Chunks kept to be written again, at most. The arena at its budget lets go of one per chunk it adds, and a page
 * (about 20 KB for 100 rows) rarely needs a new chunk (4 MB), let alone several: these are for pages larger than that.
 * Memory outside the budget (`bytes`), as are the chunks leaving: 32 MB at most, and what one call let go of.
 */
const MAX_SPARE = 8;

/** The arena of this process's tables. */
export const fragmentArena = new FragmentArena();

/**
 * Per row, 24 bytes side by side (one cache line to read a row's entry, not
 * one per field): the stamp its fragment was made at (float64), then its
 * chunk's id (-1: none), offset and length with the comma (int32 each).
 */
const ENTRY_BYTES = 24;
const F64_PER_ENTRY = ENTRY_BYTES / 8;
const I32_PER_ENTRY = ENTRY_BYTES / 4;
const CHUNK = 2;
const OFFSET = 3;
const LENGTH = 4;

export class FragmentStore {
  /** The rows' entries, as float64s (the stamp) and as int32s (the rest), over the same memory. */
  private stamps!: Float64Array;
  private ints!: Int32Array;
  private capacity = 0;
  /** The bigger memory of a growth ahead of need (growAhead), its entries filled for rows below `filled`. */
  private next: { readonly ints: Int32Array; readonly capacity: number; filled: number } | undefined;

  constructor(
    capacity: number,
    private readonly arena = fragmentArena,
  ) {
    this.grow(capacity);
  }

  /** Room for rows below `capacity`, at once (a growth under way is dropped). */
  grow(capacity: number): void {
    this.growAhead(capacity);
    this.takeGrown();
  }

  /**
   * Begin to grow to `capacity` ahead of need (dropping a growth begun before): the bigger memory now, its entries
   * filled by `fillAhead` a piece at a time (each write to a row filled already goes to both), and taken by
   * `takeGrown`.
   */
  growAhead(capacity: number): void {
    this.next = { ints: int32s(capacity * I32_PER_ENTRY), capacity, filled: 0 };
  }

  /** Fill the bigger memory's entries of rows below `to` (rows past the current capacity: none made yet). */
  fillAhead(to: number): void {
    const next = this.next!;
    const end = Math.min(to, next.capacity);
    const copied = Math.min(end, this.capacity);
    if (copied > next.filled) next.ints.set(this.ints.subarray(next.filled * I32_PER_ENTRY, copied * I32_PER_ENTRY), next.filled * I32_PER_ENTRY);
    for (let row = Math.max(next.filled, this.capacity); row < end; row++) next.ints[row * I32_PER_ENTRY + CHUNK] = -1;
    next.filled = Math.max(next.filled, end);
  }

  /** Take the bigger memory growAhead began, filling what is left first. */
  takeGrown(): void {
    const next = this.next!;
    this.fillAhead(next.capacity);
    this.take(next.ints, next.capacity);
  }

  private take(ints: Int32Array, capacity: number): void {
    this.ints = ints;
    this.stamps = new Float64Array(ints.buffer);
    this.capacity = capacity;
    this.next = undefined;
  }

  /** After a write to a row's entry: the same in the bigger memory, if it holds the row already. */
  private mirror(row: number): void {
    const next = this.next;
    if (next === undefined || row >= next.filled) return;
    const at = row * I32_PER_ENTRY;
    next.ints.set(this.ints.subarray(at, at + I32_PER_ENTRY), at);
  }

  /** The row no longer holds this version (freed or replaced): its fragment is stale. */
  forget(row: number): void {
    this.ints[row * I32_PER_ENTRY + CHUNK] = -1;
    this.mirror(row);
  }

  /**
   * The fragments of `rows` in order, each followed by a comma, as few
   * views of the chunks as they lie in (a run of rows stored one after the
   * other is one view). A row not made at `stamp` is made with `json`.
   * The views are valid until fragments are next asked for (of any store
   * of the arena): copied into a body at once, never sent as they are.
   */
  runs(rows: readonly number[], stamp: number, json: (row: number) => string): Buffer[] {
    this.arena.reuse();
    const out: Buffer[] = [];
    const ints = this.ints;
    let chunk = -1;
    let buffer: Buffer | undefined;
    let from = 0;
    let to = 0;
    for (let i = 0; i < rows.length; i++) {
      const at = rows[i]! * I32_PER_ENTRY;
      this.ensure(rows[i]!, stamp, json);
      const c = ints[at + CHUNK]!;
      const offset = ints[at + OFFSET]!;
      if (c === chunk && offset === to) {
        to += ints[at + LENGTH]!;
        continue;
      }
      if (buffer !== undefined) out.push(buffer.subarray(from, to));
      // The chunk is taken now, while it is in the arena: making a later row may let it go, and it is not written again
      // before the next call.
      buffer = this.arena.chunk(c);
      chunk = c;
      from = offset;
      to = offset + ints[at + LENGTH]!;
    }
    if (buffer !== undefined) out.push(buffer.subarray(from, to));
    return out;
  }

  /** One row's fragment, without its comma, copied out of the arena. */
  one(row: number, stamp: number, json: (row: number) => string): Buffer {
    this.arena.reuse();
    this.ensure(row, stamp, json);
    const at = row * I32_PER_ENTRY;
    const offset = this.ints[at + OFFSET]!;
    // (A copy: the reply is sent after hooks that may wait, and the chunk may be written again meanwhile.)
    return Buffer.from(this.arena.chunk(this.ints[at + CHUNK]!).subarray(offset, offset + this.ints[at + LENGTH]! - 1));
  }

  private ensure(row: number, stamp: number, json: (row: number) => string): void {
    const at = row * I32_PER_ENTRY;
    const chunk = this.ints[at + CHUNK]!;
    if (chunk >= this.arena.oldest && this.stamps[row * F64_PER_ENTRY] === stamp) return;
    const { id, offset, length } = this.arena.write(json(row));
    this.ints[at + CHUNK] = id;
    this.ints[at + OFFSET] = offset;
    this.ints[at + LENGTH] = length;
    this.stamps[row * F64_PER_ENTRY] = stamp;
    this.mirror(row);
  }
}
