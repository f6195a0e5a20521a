/** Typed arrays a search reuses instead of allocating its own. */

/**
 * A Uint32Array of `n` elements over a buffer kept for `slot` and reused by
 * the next search: searches run one at a time, and a view must not be kept
 * past the search that took it. (Fresh arrays of this size, allocated
 * outside the heap, would make V8 collect the whole heap often.)
 */
export function scratch(slot: 'matches' | 'positions' | 'inside' | 'bits' | 'bits-next', n: number): Uint32Array {
  let buffer = scratches.get(slot);
  if (buffer === undefined || buffer.length < n) {
    buffer = new Uint32Array(Math.max(n, 2 * (buffer?.length ?? 0), 1024));
    scratches.set(slot, buffer);
  }
  return buffer.subarray(0, n);
}
const scratches = new Map<string, Uint32Array>();
