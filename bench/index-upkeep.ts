/**
 * npm run build && node dist/bench/index-upkeep.js [--rows 500000 --ms 300]
 *
 * What it costs to bring one sorted index up to date with a batch of
 * changes (SortedIndex.update: half as many rows dropped as added), by the
 * size of the batch, on an index of --rows rows keyed as a live import's
 * shifts are: a start time with many ties (30-minute steps over 330 days),
 * spots (20 values: long runs of ties, settled by the id), and both (values
 * drawn here at random, not the benchmark's data: a diagnosis, not a
 * target's figure). Prints the time per update and per change. A live
 * import's shift changes each
 * pay it once for every index of the table (ten for shifts): the part of
 * the server's CPU per event that grows with the indexes.
 */
import { parseArgs } from 'node:util';
import { mulberry32 } from '../scripts/random.js';
import { SortedIndex } from '../src/readmodel/sorted-index.js';

const { values } = parseArgs({ options: { rows: { type: 'string', default: '500000' }, ms: { type: 'string', default: '300' } } });
const ROWS = Number(values.rows);
const MS = Number(values.ms);
const BATCHES = [100, 1_000, 5_000, 20_000];
/** Rows for the index and for every batch added (each row is added once: rows never change). */
const ROOM = ROWS + 20 * BATCHES.reduce((a, b) => a + b, 0);

const rand = mulberry32(20261126);
const columns: Record<string, Float64Array> = { start: new Float64Array(ROOM), spots: new Float64Array(ROOM) };
const ids: string[] = [];
for (let row = 0; row < ROOM; row++) {
  columns.start![row] = Math.floor(rand() * 330 * 48);
  columns.spots![row] = 1 + Math.floor(rand() * 20);
  // Unique, in random order (as UUIDs are).
  ids.push(Math.floor(rand() * 2 ** 20).toString(16).padStart(5, '0') + row.toString(16).padStart(8, '0'));
}
const source = { column: (name: string) => columns[name]!, idOf: (row: number) => ids[row]! };

console.log(`index upkeep: ${ROWS.toLocaleString('en-US')} rows, batches of m added and m/2 dropped rows`);
let next = ROWS;
for (const keys of [['start'], ['spots'], ['start', 'spots']]) {
  const index = new SortedIndex({ name: keys.join(','), keys }, source);
  index.restore(Uint32Array.from({ length: ROWS }, (_, row) => row).sort(index.comparator()));
  for (const m of BATCHES) {
    const started = performance.now();
    let updates = 0;
    while (updates < 20 && performance.now() - started < MS) {
      const added = Array.from({ length: m }, () => next++);
      const removed = new Set<number>();
      while (removed.size < m / 2) removed.add(index.order[Math.floor(rand() * index.size)]!);
      index.update((row) => removed.has(row), [...removed], added);
      updates++;
    }
    const per = (performance.now() - started) / updates;
    console.log(`  ${keys.join(', ').padEnd(12)} m = ${String(m).padStart(6)}: ${per.toFixed(2).padStart(6)} ms an update, ${((per / (1.5 * m)) * 1000).toFixed(2).padStart(6)} µs a change`);
  }
}
