/**
 * node dist/bench/two-writers.js [--seconds 300] [--overlapping-sync true|false] [--import-reads true]
 *   [--import-processes <ms>] [--dir <path>]
 *
 * --dir may hold a log already (a copy of a big one): the events appended are those after its head.
 *
 * The event log written by two processes at once, as `vm-api serve` (small appends: sites POSTs, and reads of
 * the log) and `vm-api import` (chunks of thousands of events) write it when an operator imports while serving:
 * both through EmbeddedEventStore, the log's own code. Each process runs until the time is up; the run fails if
 * either dies or if the log read back is not every event appended, in order, once. With lmdb-js's
 * overlappingSync on (`--overlapping-sync true`, how the log was opened before) and `--import-processes 3000`
 * on a copy of a 1.77M-event log, `serve` died in three runs of four within ten minutes (twice seen as lmdb-js
 * free-list failures: the assertion `freelist_written_start >= mop_len` in `mdb_freelist_save`, and a commit
 * refused for a damaged free list; the third's error was cut off), as it did in the 1M soak; see
 * src/eventstore/embedded.ts.
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
    /** The round of an `import-once` child (its streams' names). */
    round: { type: 'string', default: '0' },
    dir: { type: 'string' },
    'overlapping-sync': { type: 'string' },
    /** 'sync': the server's appends in a synchronous transaction (as before 6125579), not on lmdb-js's write thread. */
    'serve-append': { type: 'string' },
    /** 'true': before each chunk the import reads the whole log, as `vm-api import` does before its appends. */
    'import-reads': { type: 'string' },
    /**
     * A fresh process for each chunk, one every so many ms, as the soak's `vm-api import` every 10 s: each opens the
     * log, reads it whole, appends 3,000 events and closes it (the long-lived importer never reopens the log).
     */
    'import-processes': { type: 'string' },
  },
});
const SECONDS = Number(values.seconds);
const overlappingSync = values['overlapping-sync'] === undefined ? undefined : values['overlapping-sync'] === 'true';
/** The options each writer opens the log with, and the flags that pass them on to a child. */
const logOptions = { overlappingSync };
const optionFlags = [
  ...(overlappingSync === undefined ? [] : ['--overlapping-sync', String(overlappingSync)]),
  ...(values['serve-append'] === undefined ? [] : ['--serve-append', values['serve-append']]),
];

/** Read the whole log, as `vm-api import` does before it appends (what exists, for its checks: one long read). */
async function readWhole(store: EmbeddedEventStore): Promise<void> {
  for (let from = startOfLog; ; ) {
    const batch = await store.readAll(from, 10_000);
    if (batch.length === 0) return;
    from = batch[batch.length - 1]!.position;
  }
}

const payload = (n: number) => ({ institution_id: 'b9d1a0c2-0000-4000-8000-000000000001', occurred_at: new Date().toISOString(), n, title: `Event ${n} `.repeat(1 + (n % 12)) });

if (values.role === 'import' && values['import-processes'] !== undefined) {
  const until = Date.now() + SECONDS * 1000;
  let appended = 0;
  for (let round = 0; Date.now() < until; round++) {
    const args = [new URL(import.meta.url).pathname, '--role', 'import-once', '--dir', values.dir!, '--round', String(round), ...optionFlags];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    if (code !== 0) process.exit(1);
    appended += (JSON.parse(out) as { appended: number }).appended;
    await new Promise((resolve) => setTimeout(resolve, Number(values['import-processes'])));
  }
  console.log(JSON.stringify({ role: 'import', appended }));
  process.exit(0);
}

if (values.role === 'import-once') {
  // One `vm-api import` of the soak's size: open, read the whole log, append 3,000 events over 750 streams, close.
  const store = EmbeddedEventStore.open(values.dir!, logOptions);
  const round = Number(values.round);
  await readWhole(store);
  const appends = Array.from({ length: 750 }, (_, s) => ({
    stream: `import-${process.pid}-${round}-${s}`,
    events: Array.from({ length: 4 }, (_, k) => ({ id: crypto.randomUUID(), type: 'ShiftCreated', data: payload(round * 100_000 + s * 4 + k) })),
  }));
  await store.appendMany(appends);
  await store.close();
  console.log(JSON.stringify({ role: 'import-once', appended: 3000 }));
  process.exit(0);
}

if (values.role) {
  const store = EmbeddedEventStore.open(values.dir!, logOptions);
  const until = Date.now() + SECONDS * 1000;
  let appended = 0;
  // The server follows the log as `serve` does: its subscription reads what any process appends.
  const following = values.role === 'serve' ? store.subscribe(await store.head(), { onEvents: async () => undefined }) : undefined;
  for (let round = 0; Date.now() < until; round++) {
    if (values.role === 'import') {
      if (values['import-reads'] === 'true') await readWhole(store);
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
      const stream = `site-${process.pid}-${round}`;
      if (values['serve-append'] === 'sync') await store.appendMany([{ stream, events, expectedRevision: 'no_stream' }]);
      else await store.append(stream, events, 'no_stream');
      appended += events.length;
      if (round % 20 === 0) await store.readAll(startOfLog, 1000);
      await new Promise((resolve) => setTimeout(resolve, round % 3));
    }
  }
  await following?.close();
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
  const args = [here, '--role', role, '--dir', dir, '--seconds', String(SECONDS), ...optionFlags];
  if (values['import-reads'] !== undefined) args.push('--import-reads', values['import-reads']);
  if (values['import-processes'] !== undefined) args.push('--import-processes', values['import-processes']);
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const spawned = performance.now();
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c));
  child.stderr.on('data', (c: Buffer) => (err += c));
  return new Promise<{ role: string; code: number | null; signal: string | null; out: string; err: string; seconds: number }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ role, code, signal, out, err, seconds: (performance.now() - spawned) / 1000 })),
  );
});
const results = await Promise.all(children);
let failed = false;
let total = 0;
for (const r of results) {
  const ok = r.code === 0;
  failed ||= !ok;
  if (ok) total += (JSON.parse(r.out) as { appended: number }).appended;
  console.log(`${r.role}: ${ok ? r.out.trim() : `died after ${r.seconds.toFixed(0)} s (exit ${r.code}, signal ${r.signal})\n${r.err.trim().split('\n').slice(-40).join('\n')}`}`);
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
console.log(`${failed ? 'FAIL' : 'PASS'}  two writers for ${SECONDS} s (${((performance.now() - began) / 1000).toFixed(0)} s), overlappingSync ${overlappingSync ?? 'off (the log default)'}, server appends ${values['serve-append'] ?? 'async'}; ${dir}`);
if (!values.dir && !failed) rmSync(dir, { recursive: true, force: true });
process.exit(failed ? 1 : 0);
