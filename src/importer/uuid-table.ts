/**
 * A map from UUIDs to small numbers, for what an import remembers of every
 * record and event (millions of them): a UUID in its canonical lower-case
 * form is kept as its 16 bytes in a typed array, outside the JavaScript heap,
 * instead of as a string in a Map (about 20 bytes a slot against 80–200 for
 * a string key and its entry; an import of 1.77M events held 577 MB of such
 * Maps and Sets, and its heap grew to three times that before the collector
 * let go of it). Any other string is kept in a Map beside it: the table is
 * exact for every key.
 */

const EMPTY = 0;
const MIN_CAPACITY = 1024;
/** The table doubles when more than this share of its slots is taken (open addressing, linear probing). */
const MAX_LOAD = 0.7;

/** Each hex digit's value by char code, -1 for any other character (upper case included: such a key is not canonical). */
const HEX = new Int8Array(128).fill(-1);
for (let c = 0; c < 10; c++) HEX[48 + c] = c;
for (let c = 0; c < 6; c++) HEX[97 + c] = 10 + c;

/** The four 32-bit words of a canonical UUID written into `into`, or false when `key` is not one. */
function parse(key: string, into: Uint32Array): boolean {
  if (key.length !== 36) return false;
  let word = 0;
  let value = 0;
  let digits = 0;
  for (let i = 0; i < 36; i++) {
    const code = key.charCodeAt(i);
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (code !== 45) return false;
      continue;
    }
    const nibble = code < 128 ? HEX[code]! : -1;
    if (nibble < 0) return false;
    value = (value << 4) | nibble;
    if (++digits === 8) {
      into[word++] = value >>> 0;
      value = 0;
      digits = 0;
    }
  }
  return true;
}

function hash(w: Uint32Array): number {
  let h = w[0]! ^ Math.imul(w[1]!, 0x9e3779b1) ^ Math.imul(w[2]!, 0x85ebca6b) ^ Math.imul(w[3]!, 0xc2b2ae35);
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  h = Math.imul(h, 0x846ca68b);
  return (h ^ (h >>> 16)) >>> 0;
}

export class UuidTable {
  /** Four words a slot. */
  private keys = new Uint32Array(MIN_CAPACITY * 4);
  /** A slot's value plus one; EMPTY for a free slot. */
  private values = new Uint32Array(MIN_CAPACITY);
  private taken = 0;
  private readonly others = new Map<string, number>();
  private readonly words = new Uint32Array(4);

  get size(): number {
    return this.taken + this.others.size;
  }

  /** The value kept for `key`, or undefined. */
  get(key: string): number | undefined {
    if (!parse(key, this.words)) return this.others.get(key);
    const found = this.values[this.slotOf(this.words)]!;
    return found === EMPTY ? undefined : found - 1;
  }

  /** Keep `value` (0 to 2^32 - 2) for `key`. */
  set(key: string, value: number): void {
    if (!Number.isInteger(value) || value < 0 || value > 0xfffffffe) throw new RangeError(`a UuidTable value must be a 32-bit count, not ${value}`);
    if (!parse(key, this.words)) {
      this.others.set(key, value);
      return;
    }
    this.put(this.slotOf(this.words), value);
  }

  /** Keep the value for `key` or'ed with `bits` (a key not kept counts as 0): its value before, in one look-up. */
  or(key: string, bits: number): number {
    if (!parse(key, this.words)) {
      const before = this.others.get(key) ?? 0;
      this.set(key, (before | bits) >>> 0);
      return before;
    }
    const slot = this.slotOf(this.words);
    const found = this.values[slot]!;
    const before = found === EMPTY ? 0 : found - 1;
    const after = (before | bits) >>> 0;
    if (after > 0xfffffffe) throw new RangeError(`a UuidTable value must be a 32-bit count, not ${after}`);
    if (after !== before || found === EMPTY) this.put(slot, after);
    return before;
  }

  /** Keep `value` in `slot` (slotOf the key in `words`), the key too if the slot was free. */
  private put(slot: number, value: number): void {
    if (this.values[slot] === EMPTY) {
      this.keys.set(this.words, slot * 4);
      this.taken++;
    }
    this.values[slot] = value + 1;
    if (this.taken > this.values.length * MAX_LOAD) this.grow();
  }

  /** The slot holding these words, or the free slot where they would go. */
  private slotOf(w: Uint32Array): number {
    const mask = this.values.length - 1;
    const keys = this.keys;
    for (let slot = hash(w) & mask; ; slot = (slot + 1) & mask) {
      if (this.values[slot] === EMPTY) return slot;
      const at = slot * 4;
      if (keys[at] === w[0] && keys[at + 1] === w[1] && keys[at + 2] === w[2] && keys[at + 3] === w[3]) return slot;
    }
  }

  private grow(): void {
    const { keys, values } = this;
    this.keys = new Uint32Array(keys.length * 2);
    this.values = new Uint32Array(values.length * 2);
    const w = new Uint32Array(4);
    for (let slot = 0; slot < values.length; slot++) {
      if (values[slot] === EMPTY) continue;
      w.set(keys.subarray(slot * 4, slot * 4 + 4));
      const to = this.slotOf(w);
      this.keys.set(w, to * 4);
      this.values[to] = values[slot]!;
    }
  }
}
