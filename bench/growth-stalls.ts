/**
 * npm run build && node --expose-gc --max-old-space-size=4096 dist/bench/growth-stalls.js <DATA_DIR> [--shifts 100000]
 *
 * The longest single change a read model takes in while a live import adds
 * records: over a DATA_DIR made by `npm run bench -- --prepare` (the
 * largest institution holding half of a million shifts), the model is
 * loaded as a start-up loads it and made whole (background work
 * finished), then `--shifts` new shifts of that institution are applied
 * one by one, each with a reservation of a new id, as the projector
 * applies a live import's (each change timed alone; indexes are not
 * published meanwhile). Prints the slowest changes, with how many records
 * the model held when they came: a JavaScript Map grows all at once (every
 * entry moved) when it passes a power of two, on the event loop.
 */
import { parseArgs } from 'node:util';
import type { Records } from '../projections/records.js';
import { finishBackgroundWork } from '../src/readmodel/background.js';
import { openRuntime } from '../src/runtime.js';

const { values, positionals } = parseArgs({ options: { shifts: { type: 'string', default: '100000' } }, allowPositionals: true });
const dir = positionals[0];
if (!dir) throw new Error('usage: growth-stalls.js <DATA_DIR> [--shifts 100000]');
const N = Number(values.shifts);

const runtime = openRuntime({ DATA_DIR: dir, EVENTSTORE_URL: undefined });
await runtime.projector.load();
const { model } = runtime;
model.flush();
finishBackgroundWork(model);
globalThis.gc?.();

// A shift and a reservation of the largest institution, copied under new ids.
let shift: Records['shift'] | undefined;
const counts = new Map<string, number>();
for (const s of model.records('shift')) counts.set(s.institution_id, (counts.get(s.institution_id) ?? 0) + 1);
const largest = [...counts].sort((a, b) => b[1] - a[1])[0]![0];
for (const s of model.records('shift')) if (s.institution_id === largest && (shift = s)) break;
let reservation: Records['reservation'] | undefined;
for (const r of model.records('reservation')) if (r.institution_id === largest && (reservation = r)) break;
if (!shift || !reservation) throw new Error('no shift or reservation of the largest institution');

const hex = (n: number) => n.toString(16).padStart(12, '0');
const times: Array<{ ms: number; k: number; what: string }> = [];
const started = performance.now();
for (let k = 0; k < N; k++) {
  const shiftId = `5eed0000-0000-4000-8000-${hex(k)}`;
  let t = performance.now();
  model.apply({ kind: 'shift', id: shiftId, record: { ...shift, id: shiftId } });
  times.push({ ms: performance.now() - t, k, what: 'shift' });
  const reservationId = `5eed0000-0000-4000-9000-${hex(k)}`;
  t = performance.now();
  model.apply({ kind: 'reservation', id: reservationId, record: { ...reservation, id: reservationId, shift_id: shiftId } });
  times.push({ ms: performance.now() - t, k, what: 'reservation' });
}
const total = performance.now() - started;
const slow = [...times].sort((a, b) => b.ms - a.ms);
console.log(`${N * 2} changes (${N} shifts, ${N} reservations) in ${Math.round(total)} ms; the model held ${model.count('shift') - N} shifts and ${model.count('reservation') - N} reservations before`);
console.log(`changes over 10 ms: ${times.filter((t) => t.ms > 10).length}; over 50 ms: ${times.filter((t) => t.ms > 50).length}`);
console.log('the slowest ten:');
for (const { ms, k, what } of slow.slice(0, 10)) console.log(`  ${ms.toFixed(1).padStart(7)} ms  the ${what} of new shift ${k + 1}`);
await runtime.close();
