/**
 * node dist/bench/two-writers.js [--seconds 300] [--overlapping-sync true|false] [--import-reads true] [--dir <path>]
 *
 * --dir may hold a log already (a copy of a big one): the events appended are those after its head.
 *
 * The event log written by two processes at once, as `vm-api serve` (small appends: sites POSTs, and reads of
 * the log) and `vm-api import` (chunks of thousands of events) write it when an operator imports while serving:
 * both through EmbeddedEventStore, the log's own code. Each process runs until the time is up; the run fails if
 * either dies (lmdb-js once aborted `serve` this way, on the assertion `freelist_written_start >= mop_len` in
 * `mdb_freelist_save`, after about six minutes of the soak at 1,000,000 shifts) or if the log read back is not
 * every event appended, in order, once.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { EmbeddedEventStore } from '../src/eventstore/embedded.js';
import { startOfLog } from '../src/eventstore/port.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '300' },
    role: { type: 'string' },
    dir: { type: 'string' },
    'overlapping-sync': { type: 'string' },
    /** 'true': before each chunk the import reads the whole log, as `vm-api import` does before its appends. */
    'import-reads': { type: 'string' },
  },
});
const SECONDS = Number(values.seconds);
const overlappingSync = values['overlapping-sync'] === undefined ? undefined : values['overlapping-sync'] === 'true';

const payload = (n: number) => ({ institution_id: 'b9d1a0c2-0000-4000-8000-000000000001', occurred_at: new Date().toISOString(), n, title: `Event ${n} `.repeat(1 + (n % 12)) });

if (values.role) {
  const store = EmbeddedEventStore.open(values.dir!, { overlappingSync });
  const until = Date.now() + SECONDS * 1000;
  let appended = 0;
  for (let round = 0; Date.now() < until; round++) {
    if (values.role === 'import') {
      // An import reads the whole log first (what exists, for its checks: one long read), then appends.
      if (values['import-reads'] === 'true') {
        let from = startOfLog;
        for (;;) {
          const batch = await store.readAll(from, 10_000);
          if (batch.length === 0) break;
          from = batch[batch.length - 1]!.position;
        }
      }
      // A chunk of an import: thousands of events over many streams in one transaction.
      const size = 2000 + ((round * 7919) % 18000);
      const appends = Array.from({ length: Math.ceil(size / 4) }, (_, s) => ({
        stream: `import-${round}-${s}`,
        events: Array.from({ length: 4 }, (_, k) => ({ id: crypto.randomUUID(), type: 'ShiftCreated', data: payload(round * 100_000 + s * 4 + k) })),
      }));
      await store.appendMany(appends);
      appended += appends.length * 4;
    } else {
      // The server: a POST's few events, then a read of what came since (the subscription's way).
      const events = Array.from({ length: 1 + (round % 10) }, (_, k) => ({ id: crypto.randomUUID(), type: 'SiteCreated', data: payload(k) }));
      await store.append(`site-${process.pid}-${round}`, events, 'no_stream');
      appended += events.length;
      if (round % 20 === 0) await store.readAll(startOfLog, 1000);
      await new Promise((resolve) => setTimeout(resolve, round % 3));
    }
  }
  await store.close();
  console.log(JSON.stringify({ role: values.role, appended }));
  process.exit(0);
}

const dir = values.dir ?? mkdtempSync(join(tmpdir(), 'vm-two-writers-'));
/** Events the log held before (a copy of a big log reproduces what an empty one may not: a long free list). */
const before = await (async () => {
  const store = EmbeddedEventStore.open(dir);
  const head = (await store.head()).commit;
  await store.close();
  return head < 0n ? 0n : head;
})();
const here = new URL(import.meta.url).pathname;
const began = performance.now();
const children = ['serve', 'import'].map((role) => {
  const args = [here, '--role', role, '--dir', dir, '--seconds', String(SECONDS)];
  if (overlappingSync !== undefined) args.push('--overlapping-sync', String(overlappingSync));
  if (values['import-reads'] !== undefined) args.push('--import-reads', values['import-reads']);
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c));
  child.stderr.on('data', (c: Buffer) => (err += c));
  return new Promise<{ role: string; code: number | null; signal: string | null; out: string; err: string }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ role, code, signal, out, err })),
  );
});
const results = await Promise.all(children);
let failed = false;
let total = 0;
for (const r of results) {
  const ok = r.code === 0;
  failed ||= !ok;
  if (ok) total += (JSON.parse(r.out) as { appended: number }).appended;
  console.log(`${r.role}: ${ok ? r.out.trim() : `died (exit ${r.code}, signal ${r.signal})\n${r.err.trim().split('\n').slice(-5).join('\n')}`}`);
}
if (!failed) {
  const store = EmbeddedEventStore.open(dir);
  const seen = new Set<string>();
  let position = before === 0n ? startOfLog : { commit: before, prepare: before };
  let expected = before + 1n;
  for (;;) {
    const batch = await store.readAll(position, 10_000);
    if (batch.length === 0) break;
    for (const e of batch) {
      if (e.position.commit !== expected++ || seen.has(e.id)) failed = true;
      seen.add(e.id);
    }
    position = batch[batch.length - 1]!.position;
  }
  await store.close();
  console.log(`log read back: ${seen.size} events ${seen.size === total ? '= ' : '≠ '}${total} appended, positions ${failed ? 'NOT ' : ''}${before + 1n}…n in order`);
  failed ||= seen.size !== total;
}
console.log(`${failed ? 'FAIL' : 'PASS'}  two writers for ${SECONDS} s (${((performance.now() - began) / 1000).toFixed(0)} s), overlappingSync ${overlappingSync ?? 'default'}; ${dir}`);
if (!values.dir && !failed) rmSync(dir, { recursive: true, force: true });
process.exit(failed ? 1 : 0);
