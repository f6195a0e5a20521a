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

/** Each hex digit's value by UTF-16 code unit, -1 for any other (upper case included: such a key is not canonical). */
const HEX = new Int32Array(65536).fill(-1);
for (let c = 0; c < 10; c++) HEX[48 + c] = c;
for (let c = 0; c < 6; c++) HEX[97 + c] = 10 + c;

const DASH = 45;

/** The four hex digits at `i` as a number, negative if any is not one. */
function hex4(key: string, i: number): number {
  return (HEX[key.charCodeAt(i)]! << 12) | (HEX[key.charCodeAt(i + 1)]! << 8) | (HEX[key.charCodeAt(i + 2)]! << 4) | HEX[key.charCodeAt(i + 3)]!;
}

/**
 * The four 32-bit words of a canonical UUID written into `into`, or false when `key` is not one. Four digits at a
 * time: a loop over the 36 characters took 210-370 ns a key, this 150-290 ns (a look-up of 1.77M keys in random
 * order: 1.15 s against 0.95 s).
 */
function parse(key: string, into: Uint32Array): boolean {
  if (key.length !== 36 || key.charCodeAt(8) !== DASH || key.charCodeAt(13) !== DASH || key.charCodeAt(18) !== DASH || key.charCodeAt(23) !== DASH) {
    return false;
  }
  const a = hex4(key, 0);
  const b = hex4(key, 4);
  const c = hex4(key, 9);
  const d = hex4(key, 14);
  const e = hex4(key, 19);
  const f = hex4(key, 24);
  const g = hex4(key, 28);
  const h = hex4(key, 32);
  if ((a | b | c | d | e | f | g | h) < 0) return false;
  into[0] = (a << 16) | b;
  into[1] = (c << 16) | d;
  into[2] = (e << 16) | f;
  into[3] = (g << 16) | h;
  return true;
}

function hash(w0: number, w1: number, w2: number, w3: number): number {
  let h = w0 ^ Math.imul(w1, 0x9e3779b1) ^ Math.imul(w2, 0x85ebca6b) ^ Math.imul(w3, 0xc2b2ae35);
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  h = Math.imul(h, 0x846ca68b);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * Words a slot: the value plus one (EMPTY for a free slot), then the key's four. One array, so a look-up reads one
 * place in memory, not a key array and a value array (1.77M random UUIDs, set one by one: 0.81 s against 1.04 s;
 * looked up in another order: no different).
 */
export const SLOT = 5;

/** A UuidTable as it can be written to a file and read back (log-summary.ts): its slots as they are, and the other keys. */
export interface SavedUuidTable {
  readonly capacity: number;
  readonly taken: number;
  readonly others: readonly (readonly [string, number])[];
  /** capacity × SLOT words. */
  readonly slots: Uint32Array;
}

export class UuidTable {
  private slots: Uint32Array = new Uint32Array(MIN_CAPACITY * SLOT);
  private capacity = MIN_CAPACITY;
  private taken = 0;
  private readonly others = new Map<string, number>();
  private readonly words = new Uint32Array(4);

  get size(): number {
    return this.taken + this.others.size;
  }

  /** What the table holds, its slots not copied (the table must not change while they are used). */
  saved(): SavedUuidTable {
    return { capacity: this.capacity, taken: this.taken, others: [...this.others], slots: this.slots };
  }

  /** The table a `saved()` was taken from (the slots are taken over, not copied). */
  static restored(saved: SavedUuidTable): UuidTable {
    const { capacity, taken, others, slots } = saved;
    if (!Number.isInteger(capacity) || capacity < MIN_CAPACITY || (capacity & (capacity - 1)) !== 0 || slots.length !== capacity * SLOT || taken > capacity * MAX_LOAD) {
      throw new RangeError(`not a saved UuidTable (capacity ${capacity}, ${slots.length} words, ${taken} taken)`);
    }
    // The slots taken must be as many as it says: a table with no free slot would have look-ups go round for ever.
    let occupied = 0;
    for (let at = 0; at < slots.length; at += SLOT) if (slots[at] !== EMPTY) occupied++;
    if (occupied !== taken) throw new RangeError(`not a saved UuidTable (${occupied} slots taken, ${taken} said)`);
    const table = new UuidTable();
    table.slots = slots;
    table.capacity = capacity;
    table.taken = taken;
    for (const [key, value] of others) table.others.set(key, value);
    return table;
  }

  /** Every key's value made `value`. */
  setAll(value: number): void {
    if (!Number.isInteger(value) || value < 0 || value > 0xfffffffe) throw new RangeError(`a UuidTable value must be a 32-bit count, not ${value}`);
    const slots = this.slots;
    for (let at = 0; at < slots.length; at += SLOT) if (slots[at] !== EMPTY) slots[at] = value + 1;
    for (const key of this.others.keys()) this.others.set(key, value);
  }

  /** The value kept for `key`, or undefined. */
  get(key: string): number | undefined {
    if (!parse(key, this.words)) return this.others.get(key);
    const found = this.slots[this.slotOf(this.words)]!;
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
    const at = this.slotOf(this.words);
    const found = this.slots[at]!;
    const before = found === EMPTY ? 0 : found - 1;
    const after = (before | bits) >>> 0;
    if (after > 0xfffffffe) throw new RangeError(`a UuidTable value must be a 32-bit count, not ${after}`);
    if (after !== before || found === EMPTY) this.put(at, after);
    return before;
  }

  /** Keep the value for `key` plus one (0 for a key not kept): its value before (undefined if none), in one look-up. */
  increment(key: string): number | undefined {
    if (!parse(key, this.words)) {
      const before = this.others.get(key);
      this.set(key, before === undefined ? 0 : before + 1);
      return before;
    }
    const at = this.slotOf(this.words);
    const found = this.slots[at]!;
    if (found === EMPTY) {
      this.put(at, 0);
      return undefined;
    }
    if (found - 1 >= 0xfffffffe) throw new RangeError(`a UuidTable value must be a 32-bit count, not ${found}`);
    this.slots[at] = found + 1;
    return found - 1;
  }

  /** Keep `value` in the slot at `at` (slotOf the key in `words`), the key too if the slot was free. */
  private put(at: number, value: number): void {
    const slots = this.slots;
    if (slots[at] === EMPTY) {
      const w = this.words;
      slots[at + 1] = w[0]!;
      slots[at + 2] = w[1]!;
      slots[at + 3] = w[2]!;
      slots[at + 4] = w[3]!;
      this.taken++;
    }
    slots[at] = value + 1;
    if (this.taken > this.capacity * MAX_LOAD) this.grow();
  }

  /** Where the slot holding these words starts, or the free slot's where they would go. */
  private slotOf(w: Uint32Array): number {
    return UuidTable.find(this.slots, this.capacity - 1, w[0]!, w[1]!, w[2]!, w[3]!);
  }

  private static find(slots: Uint32Array, mask: number, w0: number, w1: number, w2: number, w3: number): number {
    for (let slot = hash(w0, w1, w2, w3) & mask; ; slot = (slot + 1) & mask) {
      const at = slot * SLOT;
      if (slots[at] === EMPTY) return at;
      if (slots[at + 1] === w0 && slots[at + 2] === w1 && slots[at + 3] === w2 && slots[at + 4] === w3) return at;
    }
  }

  /**
   * Room for `keys` UUIDs in all without growing (one move of what is kept now): each doubling moves every key to a
   * random place in a bigger array. In profiles of an import of 1.77M events, the growth of all its tables took 1.1 s
   * of its main thread; with the event ids reserved once a 64th of the file is read, 0.74 s (their one move 0.26 s).
   */
  reserve(keys: number): void {
    let capacity = this.capacity;
    while (keys > capacity * MAX_LOAD) capacity *= 2;
    if (capacity > this.capacity) this.grow(capacity);
  }

  private grow(capacity = this.capacity * 2): void {
    const old = this.slots;
    const slots = new Uint32Array(capacity * SLOT);
    const mask = capacity - 1;
    for (let from = 0; from < old.length; from += SLOT) {
      if (old[from] === EMPTY) continue;
      const to = UuidTable.find(slots, mask, old[from + 1]!, old[from + 2]!, old[from + 3]!, old[from + 4]!);
      for (let w = 0; w < SLOT; w++) slots[to + w] = old[from + w]!;
    }
    this.slots = slots;
    this.capacity = capacity;
  }
}
