/**
 * Memory for the read model's big arrays — index orders, columns, positions,
 * rank matrices — on a SharedArrayBuffer from BIG_BYTES up.
 *
 * V8 counts the memory of every plain ArrayBuffer and, each time that count
 * has grown by 64 MB since its last full collection, starts another
 * ("external memory pressure"), whether that memory is garbage or not. A
 * full collection marks the whole heap: at a million shifts, 900 MB and
 * 118-615 ms of marking steps on the main thread. The read model makes and
 * lets go of such arrays as it works (an index's next order, positions and
 * matrices made again after a change), so a
 * server under a live import started one every 2-4 s, 26 in a 2-minute
 * run (`--trace-gc --trace-incremental-marking`), and reads waited behind
 * them. V8 does not count a SharedArrayBuffer's memory (holding 384 MB of
 * it starts no full collection where plain memory starts five:
 * test/big-arrays.test.ts), so these start none: the heap is collected as
 * its own allocations ask. They are freed as any other array once collected.
 * What they add up to stays bounded by the read model's own budgets
 * (RANK_MATRIX_MB, FRAGMENT_CACHE_MB; and OrderRanks' spares, at most what
 * a table's last change let go of) and the tables' sizes, plus what waits
 * for a collection.
 *
 * Reads and writes of elements are as fast as on a plain ArrayBuffer (same
 * maps, same compiled code). Copies out of shared memory are not: pages of
 * 100 JSON fragments took more than twice as long to copy out of it (a
 * median of 11.8 µs against 5.2; `set` and `Buffer.copy` alike), so the
 * JSON arena, whose pages are copied into every reply, is plain memory it
 * writes again (fragment-store.ts).
 *
 * Shared memory changes nothing while one thread holds it: these arrays
 * are never posted to a worker (the snapshot codec copies them into memory
 * of its own). Nor are they given to LMDB: lmdb-js takes a value's memory
 * by address and crashes the process (a segmentation fault) on a
 * SharedArrayBuffer; what is written goes through `unshared`.
 */

/** Smaller arrays are plain. (Not much larger: a rank matrix of 500,000 rows is 38 arrays of 62.5 KB.) */
export const BIG_BYTES = 1 << 12;

const memory = (bytes: number): ArrayBufferLike => (bytes >= BIG_BYTES ? new SharedArrayBuffer(bytes) : new ArrayBuffer(bytes));

export function uint32s(length: number): Uint32Array {
  return new Uint32Array(memory(length * 4));
}

export function int32s(length: number): Int32Array {
  return new Int32Array(memory(length * 4));
}

export function float64s(length: number): Float64Array {
  return new Float64Array(memory(length * 8));
}

export function uint8s(length: number): Uint8Array {
  return new Uint8Array(memory(length));
}

/** `view`, checked not to be in shared memory: for what is given to LMDB (see above). */
export function unshared<T extends ArrayBufferView>(view: T): T {
  if (view.buffer instanceof SharedArrayBuffer) throw new Error('A value in shared memory cannot be written to LMDB (lmdb-js would crash): copy it first.');
  return view;
}
