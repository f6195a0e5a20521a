/**
 * A wavelet matrix over a sequence of integers: the positions of one sorted
 * index, each holding its row's position in another (the index of the
 * order asked for). For rows that are blocks of the first index (what a
 * query's constraints select), it finds the k-th smallest position in the
 * order — the k-th row of the selection in that order — reading two rank
 * counts per level and block: O(log n), whatever the selection's size.
 *
 * Built a piece of a level at a time (`RankMatrixBuilder.step`), so that a
 * build can yield to requests between pieces.
 */
import { uint32s } from '../big-arrays.js';

/** Ones in a 32-bit word. */
function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) as number;
}

/**
 * A level's bits in blocks of 8 words (32 bytes): the first, the ones before the block; the other 7, 224 positions'
 * bits. A rank count reads a block, where it read a count kept apart for every word and the word: one read at
 * random where there were two, in 43 % less memory (a matrix of 500,000 positions: 1,357,664 bytes, 2,375,152
 * before, and 1,267,072 in blocks of 16 words). Measured on 40 such matrices (95 MB: cold), 200,000 random blocks
 * each, runs alternated: kth 4.0–4.7 µs and countBelow 3.7–4.5 µs before; 4.4–5.1 and 4.6–5.1 µs in blocks of 16
 * words (the popcounts of 7 words on average cost more than the second read at random did: as I read it, the
 * processor made that one at the same time as the first); 4.1–4.3 and 3.9–4.2 µs in blocks of 8, at 1.14 bits a
 * position. No faster, then (countBelow 7 % slower, kth 1.5 %, on the means of the runs alternated with the old
 * layout): the layout is for its memory.
 */
const BLOCK_WORDS = 8;
const BLOCK_BITS = 32 * (BLOCK_WORDS - 1);

/** Words of a level of `n` positions (a block for position n too: a rank count may be taken there). */
const levelWords = (n: number) => BLOCK_WORDS * (Math.floor(n / BLOCK_BITS) + 1);

/** Where position `i`'s bit is: its word in the level. */
const wordOf = (i: number) => {
  const block = Math.floor(i / BLOCK_BITS);
  return block * BLOCK_WORDS + 1 + ((i - block * BLOCK_BITS) >>> 5);
};

/** One level: its blocks of bits (see BLOCK_WORDS). */
interface Level {
  readonly blocks: Uint32Array;
  /** Zeros in the level (where the ones' positions start on the next level). */
  readonly zeros: number;
}

/** Ones at the positions before `position`. */
function onesBefore(level: Level, position: number): number {
  const blocks = level.blocks;
  const block = Math.floor(position / BLOCK_BITS);
  const at = block * BLOCK_WORDS;
  const within = position - block * BLOCK_BITS;
  const whole = within >>> 5;
  let ones = blocks[at]!;
  for (let w = 1; w <= whole; w++) ones += popcount(blocks[at + w]!);
  const bit = within & 31;
  return bit === 0 ? ones : ones + popcount(blocks[at + 1 + whole]! & (0xffffffff >>> (32 - bit)));
}

export class RankMatrix {
  private constructor(
    readonly length: number,
    /** Most significant bit first. */
    private readonly levels: readonly Level[],
  ) {}

  /** The arrays it is made of (for the next matrix to be made in, once no search can read this one). */
  arrays(): Uint32Array[] {
    return this.levels.map((l) => l.blocks);
  }

  /** Bytes held. */
  get bytes(): number {
    return this.levels.reduce((a, l) => a + l.blocks.byteLength, 0);
  }

  /**
   * The k-th smallest value (0-based) held at the positions of the blocks
   * `[from, to)` (pairs, `blocks`): each level narrows every block to its
   * values on the side the k-th is on.
   */
  kth(blocks: readonly number[], k: number): number {
    const at = Float64Array.from(blocks);
    const ones = new Float64Array(at.length);
    const bits = this.levels.length;
    let value = 0;
    for (let l = 0; l < bits; l++) {
      const level = this.levels[l]!;
      let zeros = 0;
      for (let i = 0; i < at.length; i += 2) {
        const a = (ones[i] = onesBefore(level, at[i]!));
        const b = (ones[i + 1] = onesBefore(level, at[i + 1]!));
        zeros += at[i + 1]! - at[i]! - (b - a);
      }
      if (k < zeros) {
        // Among the zeros of this level: a position's place there is the zeros before it.
        for (let i = 0; i < at.length; i++) at[i] = at[i]! - ones[i]!;
      } else {
        // Among the ones, which come after every zero.
        k -= zeros;
        value += 2 ** (bits - 1 - l);
        for (let i = 0; i < at.length; i++) at[i] = level.zeros + ones[i]!;
      }
    }
    return value;
  }

  /** How many values held at the positions of the blocks are below `value`: a rank count per level and block. */
  countBelow(blocks: readonly number[], value: number): number {
    const bits = this.levels.length;
    if (value >= 2 ** bits) return blocks.reduce((n, b, i) => (i % 2 === 0 ? n - b : n + b), 0);
    if (value <= 0) return 0;
    const at = Float64Array.from(blocks);
    let below = 0;
    for (let l = 0; l < bits; l++) {
      const level = this.levels[l]!;
      const one = Math.floor(value / 2 ** (bits - 1 - l)) % 2 === 1;
      for (let i = 0; i < at.length; i += 2) {
        const a = onesBefore(level, at[i]!);
        const b = onesBefore(level, at[i + 1]!);
        if (one) {
          // Every value on the zeros' side is below: count them, go on among the ones.
          below += at[i + 1]! - at[i]! - (b - a);
          at[i] = level.zeros + a;
          at[i + 1] = level.zeros + b;
        } else {
          at[i] = at[i]! - a;
          at[i + 1] = at[i + 1]! - b;
        }
      }
    }
    return below;
  }

  /** A matrix of these values (each below 2^bits) in one go (see RankMatrixBuilder). */
  static of(values: Uint32Array, bits: number): RankMatrix {
    const builder = new RankMatrixBuilder(values, bits);
    while (!builder.step());
    return builder.result();
  }

  /** @internal (the builder makes it) */
  static made(length: number, levels: readonly Level[]): RankMatrix {
    return new RankMatrix(length, levels);
  }
}

/**
 * Builds a RankMatrix a piece at a time: a level is a pass over the values that splits them by its bit (and counts
 * the next level's ones on the way; the first level's are counted in a pass of their own), made `stepValues` values a
 * step. A whole level in one step took 6 ms at 500,000 values and 12 ms at a million on an idle machine, and 40–70 ms
 * while an import shared the two cores: the background's slices between requests (4 ms then, SLICE_MS now) each
 * became that long.
 *
 * The split neither branches on a value's bit (random in the low levels: a branch mispredicted half the time) nor
 * finds a position's word for each value: it makes a word of 32 bits at a time. Matrices made in one go (the median of
 * seven; two runs each, alternated, on a slow day: the benchmark's yardstick 80-110 µs), with a branch and a word found
 * for each value and the counts in passes of their own, then this way: 500,000 values in a random order 100-102 ms,
 * then 36-52 ms; the same nearly in order (a twentieth of them moved by up to 1,000 places) 50-61, then 35-49 ms; a
 * million in a random order 205, then 74-106 ms.
 */
export class RankMatrixBuilder {
  /** Values a step reads at most (tests lower it). */
  static stepValues = 1 << 16;

  private current: Uint32Array;
  private next: Uint32Array;
  private readonly levels: Level[] = [];
  /** The level under way: values counted (the first level's), its zeros, its blocks once counted, values split and where the next go. */
  private counted = 0;
  private zeros = 0;
  private blocks: Uint32Array | undefined;
  private split = 0;
  private nextZero = 0;
  private nextOne = 0;
  /** The next level's ones among the values split so far. */
  private nextLevelOnes = 0;

  /**
   * `values` is consumed (reordered); `next`, as long, is where the values are split to (made here if not given).
   * Neither is part of the result: once it is made, both are free for the next builder. The matrix's own arrays come
   * from `room` (given a length, an array of it: new, or one used before, whatever it holds).
   */
  constructor(
    values: Uint32Array,
    private readonly bits: number,
    next = uint32s(values.length),
    private readonly room: (length: number) => Uint32Array = uint32s,
  ) {
    this.current = values;
    this.next = next;
  }

  /** Make the next piece; true once every level is made. */
  step(): boolean {
    if (this.levels.length >= this.bits) return true;
    const shift = this.bits - 1 - this.levels.length;
    const cur = this.current;
    const n = cur.length;
    if (this.blocks === undefined) {
      const end = Math.min(n, this.counted + RankMatrixBuilder.stepValues);
      let ones = 0;
      for (let i = this.counted; i < end; i++) ones += (cur[i]! >>> shift) & 1;
      this.zeros += end - this.counted - ones;
      this.counted = end;
      if (end === n) this.startSplit(n);
      return false;
    }
    const blocks = this.blocks;
    const next = this.next;
    const end = Math.min(n, this.split + RankMatrixBuilder.stepValues);
    // (On the last level, the bit below is bit 31, 0 in every value: counted for nothing.)
    const lower = (shift - 1) & 31;
    let z = this.nextZero;
    let o = this.nextOne;
    let lowerOnes = this.nextLevelOnes;
    let i = this.split;
    while (i < end) {
      const wordEnd = Math.min(end, (i | 31) + 1);
      let word = 0;
      for (; i < wordEnd; i++) {
        const v = cur[i]!;
        const bit = (v >>> shift) & 1;
        word |= bit << (i & 31);
        // To the zeros' side or the ones', without a branch: -bit is every bit set when bit is 1.
        next[z + ((o - z) & -bit)] = v;
        o += bit;
        z += bit ^ 1;
        lowerOnes += (v >>> lower) & 1;
      }
      // (Or'd in: a step that ends within a word, in tests, leaves the rest of it to the next.)
      blocks[wordOf(i - 1)]! |= word;
    }
    this.nextZero = z;
    this.nextOne = o;
    this.nextLevelOnes = lowerOnes;
    this.split = end;
    if (end < n) return false;
    // Each block's count: the ones of the blocks before it.
    let ones = 0;
    for (let at = 0; at < blocks.length; at += BLOCK_WORDS) {
      blocks[at] = ones;
      for (let w = 1; w < BLOCK_WORDS; w++) ones += popcount(blocks[at + w]!);
    }
    this.levels.push({ blocks, zeros: this.zeros });
    this.current = next;
    this.next = cur;
    this.split = this.nextZero = this.nextOne = this.nextLevelOnes = 0;
    this.blocks = undefined;
    if (this.levels.length >= this.bits) return true;
    // The next level's zeros are known: its split comes next.
    this.zeros = n - lowerOnes;
    this.startSplit(n);
    return false;
  }

  /** The level under way is counted: its blocks, and where its ones go. */
  private startSplit(n: number): void {
    this.blocks = this.room(levelWords(n)).fill(0);
    this.nextOne = this.zeros;
    this.nextZero = 0;
  }

  result(): RankMatrix {
    if (this.levels.length < this.bits) throw new Error('the matrix is not built yet');
    return RankMatrix.made(this.current.length, this.levels);
  }
}

/** Bits enough for every value below `n`. */
export function bitsFor(n: number): number {
  return Math.max(1, Math.ceil(Math.log2(n + 1)));
}
