/**
 * The wavelet matrix against a sort: random sequences (many repeats, or
 * every value once as positions are), random blocks of positions, every k:
 * the k-th smallest value in the blocks is the k-th of their values sorted,
 * and the count of values below any value is that of the sort.
 */
import fc from 'fast-check';
import t from 'tap';
import { bitsFor, RankMatrix } from '../src/readmodel/rank-matrix.js';

t.test('the k-th smallest value of any blocks is that of a sort of their values', async (t) => {
  let compared = 0;
  fc.assert(
    fc.property(
      fc.oneof(
        fc.array(fc.integer({ min: 0, max: 40 }), { minLength: 1, maxLength: 300 }),
        fc.integer({ min: 1, max: 300 }).chain((n) => fc.shuffledSubarray([...Array(n).keys()], { minLength: n, maxLength: n })),
      ),
      fc.array(fc.tuple(fc.nat(), fc.nat()), { minLength: 1, maxLength: 6 }),
      (values, cuts) => {
        const n = values.length;
        const max = Math.max(...values);
        const matrix = RankMatrix.of(Uint32Array.from(values), bitsFor(max));
        // Disjoint, ascending blocks.
        const edges = [...new Set(cuts.flatMap(([a, b]) => [a % (n + 1), b % (n + 1)]))].sort((a, b) => a - b);
        const blocks: number[] = [];
        for (let i = 0; i + 1 < edges.length; i += 2) blocks.push(edges[i]!, edges[i + 1]!);
        const inBlocks = blocks.length === 0 ? [] : blocks.flatMap((_, i) => (i % 2 === 0 ? values.slice(blocks[i], blocks[i + 1]) : [])).sort((a, b) => a - b);
        for (let v = -1; v <= max + 1; v++) {
          const below = matrix.countBelow(blocks, v);
          const expected = inBlocks.filter((x) => x < v).length;
          if (below !== expected) throw new Error(`blocks ${blocks.join(',')}: ${below} values below ${v}, expected ${expected}`);
        }
        for (let k = 0; k < inBlocks.length; k++) {
          const got = matrix.kth(blocks, k);
          if (got !== inBlocks[k]) throw new Error(`blocks ${blocks.join(',')} k ${k}: ${got}, expected ${inBlocks[k]}`);
          compared++;
        }
      },
    ),
    { numRuns: 500 },
  );
  t.ok(compared > 5000, `${compared} k-th values compared`);
});
