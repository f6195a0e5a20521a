/**
 * Stream entries in the order of their keys in the embedded log's `streams` table ([stream, revision], as
 * ordered-binary writes them): what lets a big batch of them (an import's) be put leaf after leaf, and past the
 * table's last key, appended (MDB_APPEND: no search down the tree, and leaves filled, where a split leaves two
 * half-full ones).
 *
 * A radix sort, not a comparison of names: by the stream's kind (its name up to the first '-', ranked) and the six
 * characters after it, then, where those are the same for different streams, by the whole name. At 1.77M entries of
 * random names: 0.45 s, where comparing names took 4.8–5.4 s, and the sort this replaces (by a number made of four
 * characters, in an order close to the keys' but not exact) about 1 s. Puts in exact order, appended: an import of
 * 1.77M events took 22.9–23.7 s against 25.2–25.4 s, and its log is 727 MB against 801 MB.
 */

export interface Keyed {
  readonly stream: string;
  readonly revision: number;
}

/**
 * The order of `streams` keys where a name's key bytes are its characters (printable ASCII, as every stream's name
 * is). For others, ordered-binary's bytes (characters below 28 escaped, UTF-8) may order them otherwise: LMDB then
 * refuses the append of a key not past the last, and the caller puts it as any other.
 */
export function compareKeys(a: Keyed, b: Keyed): number {
  return a.stream < b.stream ? -1 : a.stream > b.stream ? 1 : a.revision - b.revision;
}

/** Below this many entries, a comparison sort. */
const SMALL = 512;
/** Entries whose kind and first six characters after it are the same, at most, that are still put in exact order. */
const LONGEST_TIE = 4096;

export interface KeyOrder<T> {
  readonly ordered: T[];
  /**
   * Whether `ordered` is exactly in `compareKeys`'s order, each key after the one before (no run of LONGEST_TIE
   * names alike in their first characters, no key twice); otherwise it is only near it.
   */
  readonly exact: boolean;
}

export function inKeyOrder<T extends Keyed>(entries: readonly T[]): KeyOrder<T> {
  const n = entries.length;
  if (n < SMALL) {
    const ordered = [...entries].sort(compareKeys);
    return { ordered, exact: strictlyOrdered(ordered, 0, n) };
  }
  // Four digits of 16 bits an entry, in two words: the kind's rank, then the six characters after it, two a digit.
  const high = new Uint32Array(n);
  const low = new Uint32Array(n);
  const kinds = new Map<string, number>();
  /** The kinds met so far that end in '-' (a few: found by comparing, not by a string cut from each name). */
  const dashed: string[] = [];
  for (let j = 0; j < n; j++) {
    const name = entries[j]!.stream;
    const rest = name.indexOf('-') + 1;
    let kind = rest === 0 ? name : dashed.find((k) => k.length === rest && name.startsWith(k));
    if (kind === undefined) dashed.push((kind = name.slice(0, rest)));
    let id = kinds.get(kind);
    if (id === undefined) kinds.set(kind, (id = kinds.size));
    // Six characters from `rest` as bytes: one past a byte (a code unit from 255 on) reads 255 and ends them (the
    // rest read 0), so that names alike up to there tie, for the comparison of whole names to order.
    let bytes = 0;
    let ended = false;
    for (let k = rest; k < rest + 6; k++) {
      const c: number = ended ? 0 : name.charCodeAt(k) | 0; // (past the name's end: NaN, 0)
      ended ||= c >= 255;
      bytes = bytes * 256 + (c >= 255 ? 255 : c);
    }
    high[j] = ((id << 16) | Math.floor(bytes / 2 ** 32)) >>> 0;
    low[j] = bytes % 2 ** 32;
  }
  if (kinds.size > 0x10000) {
    const ordered = [...entries].sort(compareKeys);
    return { ordered, exact: strictlyOrdered(ordered, 0, n) };
  }
  // Kinds ranked in the order of their names: one kind before another puts every name of it before the other's.
  const rank = new Uint32Array(kinds.size);
  [...kinds.keys()].sort().forEach((kind, r) => (rank[kinds.get(kind)!] = r));
  for (let j = 0; j < n; j++) high[j] = ((rank[high[j]! >>> 16]! << 16) | (high[j]! & 0xffff)) >>> 0;

  // Least significant digit first; each pass is stable, so entries alike in all four stay in the order given.
  let order = new Uint32Array(n);
  for (let j = 0; j < n; j++) order[j] = j;
  let next = new Uint32Array(n);
  const count = new Uint32Array(0x10001);
  for (const [words, shift] of [[low, 0], [low, 16], [high, 0], [high, 16]] as const) {
    count.fill(0);
    for (let j = 0; j < n; j++) count[((words[j]! >>> shift) & 0xffff) + 1]!++;
    if (count.includes(n)) continue; // (every entry alike in this digit)
    for (let b = 1; b <= 0x10000; b++) count[b]! += count[b - 1]!;
    for (let i = 0; i < n; i++) {
      const j = order[i]!;
      next[count[(words[j]! >>> shift) & 0xffff]!++] = j;
    }
    [order, next] = [next, order];
  }

  const ordered = new Array<T>(n);
  for (let i = 0; i < n; i++) ordered[i] = entries[order[i]!]!;
  // Entries of different digits are in order (each digit orders as the characters it is made of do). Runs alike in
  // all four: by whole names (a stream's revisions, or names alike in their first characters).
  let exact = true;
  for (let start = 0; start < n; ) {
    const first = order[start]!;
    let end = start + 1;
    while (end < n && high[order[end]!] === high[first] && low[order[end]!] === low[first]) end++;
    if (end - start > LONGEST_TIE) exact = false;
    else if (end - start > 1) {
      const run = ordered.slice(start, end).sort(compareKeys);
      for (let i = 0; i < run.length; i++) ordered[start + i] = run[i]!;
      if (!strictlyOrdered(ordered, start, end)) exact = false;
    }
    start = end;
  }
  return { ordered, exact };
}

/** Each key of entries [start, end) after the one before (no key twice). */
function strictlyOrdered(entries: readonly Keyed[], start: number, end: number): boolean {
  for (let i = start + 1; i < end; i++) if (compareKeys(entries[i - 1]!, entries[i]!) >= 0) return false;
  return true;
}
