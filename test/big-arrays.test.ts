/**
 * The read model's big arrays (src/big-arrays.ts): zeroed, of the length
 * asked, and — what they are for — held and let go of without V8 starting
 * full collections of the heap for them, where the same memory in plain
 * ArrayBuffers starts one for every 64 MB.
 */
import { constants, PerformanceObserver } from 'node:perf_hooks';
import t from 'tap';
import { BIG_BYTES, float64s, int32s, uint32s, uint8s, unshared } from '../src/big-arrays.js';

t.test('arrays of every type come zeroed, of the length asked, big ones on shared memory and small ones not', async (t) => {
  for (const [name, make, width] of [
    ['uint32s', uint32s, 4],
    ['int32s', int32s, 4],
    ['float64s', float64s, 8],
    ['uint8s', uint8s, 1],
  ] as const) {
    for (const length of [0, 1, 1000, BIG_BYTES / width - 1, BIG_BYTES / width, 3 * BIG_BYTES]) {
      const array = make(length);
      t.equal(array.length, length, `${name}(${length}): its length`);
      t.ok(array.every((v) => v === 0), `${name}(${length}): zeroed`);
      t.equal(array.buffer instanceof SharedArrayBuffer, length * width >= BIG_BYTES, `${name}(${length}): shared memory from ${BIG_BYTES} bytes`);
    }
  }
});

t.test('what is written to LMDB is checked not to be in shared memory (lmdb-js would crash the process)', async (t) => {
  const plain = Buffer.alloc(BIG_BYTES);
  t.equal(unshared(plain), plain, 'plain memory passes');
  t.throws(() => unshared(uint8s(BIG_BYTES).subarray(1, 10)), /shared memory cannot be written to LMDB/, 'a view of a big array does not');
});

/** Major collections while 384 MB is held in 6 MB arrays, then let go of, a piece at a time. */
async function majorCollectionsWhile(make: (bytes: number) => ArrayBufferView): Promise<number> {
  let majors = 0;
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) if ((entry as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) majors++;
  });
  observer.observe({ entryTypes: ['gc'] });
  const held: ArrayBufferView[] = [];
  for (let i = 0; i < 64; i++) {
    held.push(make(6 * 2 ** 20));
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  held.length = 0;
  // (Entries are delivered asynchronously.)
  await new Promise((resolve) => setTimeout(resolve, 50));
  observer.disconnect();
  return majors;
}

t.test('holding hundreds of MB of big arrays starts no full collection, where plain ArrayBuffers start one for every 64 MB', async (t) => {
  const plain = await majorCollectionsWhile((bytes) => new Uint8Array(bytes));
  // The control: if V8 stopped collecting for plain ArrayBuffers, this test could no longer tell.
  t.ok(plain >= 3, `plain ArrayBuffers: ${plain} full collections (V8's external memory pressure)`);
  const big = await majorCollectionsWhile((bytes) => uint8s(bytes));
  t.ok(big <= 1, `big arrays: ${big} full collections`);
});
