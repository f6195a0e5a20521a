/**
 * npm run bench:operator [-- --shifts 1000000 --institutions 10 --live-events 1000000 --read-rate 200 --keep]
 *
 * The operator's path, as the README runs it, on the benchmark's skewed data
 * (the largest institution half of the shifts, repeat volunteers with many
 * reservations): every command in a process of its own over one DATA_DIR,
 * timed, with its peak resident memory.
 *
 * 1. `vm-api import` of the whole data set into an empty DATA_DIR;
 * 2. the first `vm-api serve` after it: when it listens, what /healthz and
 *    /api/ say while it catches up, when /readyz says ready;
 * 3. a restart from what that left (a snapshot);
 * 4. `vm-api rebuild`, and a restart from the snapshot it wrote;
 * 5. a live import of --live-events more events into the DATA_DIR of that
 *    server while it serves the random search mix (--read-rate requests a
 *    second, sent on a clock whatever the answers take, so a stall shows as
 *    the latency of every request behind it) and a sites bulk-create every
 *    250 ms, /healthz read every 500 ms; the reads go on until the journal
 *    the import grew is folded into a snapshot (a fold stalls requests too);
 * 6. a restart after it (a snapshot and the journal the live import left);
 * 7. the day's yardstick: the benchmark server's constant route, the same
 *    bytes as the mix's answers, CPU per request — time targets are for a
 *    30 µs day and are scaled by yardstick ÷ 30 (issue 15).
 *
 * Peak memory is VmHWM read from /proc every 100 ms (a peak in a command's
 * last 100 ms can be missed).
 *
 * `--reuse <DATA_DIR>` (a directory an earlier run kept with --keep) runs
 * steps 5 to 7 only, with fresh live events; `--profile <dir>` writes a CPU
 * profile of the server of step 5 there, `--server-node-args` gives it node
 * options.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync, closeSync, openSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { mulberry32 } from '../scripts/random.js';
import { EVENT_LOOP_SAMPLE_MS } from '../src/http/metrics.js';
import { type Call, client } from './client.js';
import { type BenchData, generate, liveEvents } from './generate.js';
import { type Command, listeningUrl, metricValue, procStatus, vmApi } from './processes.js';
import { isPage, randomQueries, withPage } from './random-mix.js';
import { quantile } from './report.js';

const { values } = parseArgs({
  options: {
    shifts: { type: 'string', default: '1000000' },
    institutions: { type: 'string', default: '10' },
    'live-events': { type: 'string', default: '1000000' },
    /** Searches a second during the live import (an open loop: sent on a clock, answered or not). */
    'read-rate': { type: 'string', default: '200' },
    /** Distinct queries of the random mix the reads cycle through. */
    queries: { type: 'string', default: '4000' },
    seed: { type: 'string' },
    keep: { type: 'boolean', default: false },
    reuse: { type: 'string' },
    profile: { type: 'string' },
    /** Node options for the server of step 5, space-separated (say `--trace-gc`; its output goes to its log). */
    'server-node-args': { type: 'string', default: '' },
  },
});
const SHIFTS = Number(values.shifts);
const LIVE = Number(values['live-events']);
const READ_RATE = Number(values['read-rate']);
const SEED = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
const here = new URL('.', import.meta.url).pathname;

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const mb = (bytes: number) => `${fmt(bytes / 2 ** 20)} MB`;
const seconds = (ms: number) => `${fmt(ms / 1000, 2)} s`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const GB_1_5 = 1.5 * 2 ** 30;

/** The figures and their targets, printed together at the end. Time targets are scaled once the yardstick is known. */
interface Figure {
  step: string;
  what: string;
  value: number;
  shown: string;
  /** A target at a 30 µs day: `max` (the value at most) or `min` (at least), scaled by the yardstick when `scaled`. */
  target?: { max?: number; min?: number; unit: string; scaled: boolean };
}
const figures: Figure[] = [];
function figure(step: string, what: string, value: number, shown: string, target?: Figure['target']): void {
  figures.push({ step, what, value, shown, ...(target ? { target } : {}) });
  console.log(`  ${step}: ${what}: ${shown}`);
}
const atMost = (max: number, unit: string, scaled = true) => ({ max, unit, scaled });
const atLeast = (min: number, unit: string, scaled = true) => ({ min, unit, scaled });
/** The peak (VmHWM, the target's measure) and, beside it, the sampled peaks of its anonymous and file-backed parts. */
const memory = (step: string, command: Command, what = 'peak RSS (VmHWM)', judged = true) => {
  const { anon, file } = command.peaks();
  figure(step, what, command.peak(), `${mb(command.peak())} (sampled peaks: anonymous ${mb(anon)}, mapped files ${mb(file)})`, judged ? atMost(GB_1_5, 'bytes', false) : undefined);
};

const dir = values.reuse ?? mkdtempSync(join(tmpdir(), 'vm-operator-'));
const liveFile = join(dir, `live-${SEED}.ndjson`);
const env = { DATA_DIR: dir, PORT: '0', LOG_LEVEL: 'info', RATE_LIMIT_MAX: '0' };
const running = new Set<Command>();
process.on('exit', () => {
  for (const c of running) c.child.kill('SIGKILL');
  if (values.reuse) rmSync(liveFile, { force: true });
  else if (!values.keep) rmSync(dir, { recursive: true, force: true });
});
const started = (command: Command) => {
  running.add(command);
  void command.exited.then(() => running.delete(command));
  return command;
};
async function mustExit(command: Command, what: string): Promise<void> {
  const code = await command.exited;
  if (code !== 0) throw new Error(`${what} exited with ${code}`);
}

console.log(`operator run: ${fmt(SHIFTS)} shifts, ${values.institutions} institutions, live import of ${fmt(LIVE)} events, seed ${SEED}; DATA_DIR ${dir}`);

// The data, written as files an operator would import; this process lets go of them before any step is timed.
// (The same data set on a reused directory: generate's seed is fixed.)
const data: BenchData = generate(SHIFTS, Number(values.institutions));
const dataFile = join(dir, 'data.ndjson');
const writeLines = (file: string, lines: readonly string[]) => {
  const fd = openSync(file, 'w');
  for (let i = 0; i < lines.length; i += 100_000) writeSync(fd, lines.slice(i, i + 100_000).join('\n') + '\n');
  closeSync(fd);
};
if (!values.reuse) writeLines(dataFile, data.lines);
const events = data.lines.length;
data.lines = [];
writeLines(liveFile, liveEvents(data, LIVE, SEED).map((e) => JSON.stringify(e)));
globalThis.gc?.();
console.log(`data: ${fmt(events)} events to import, then ${fmt(LIVE)} live`);

/**
 * An import: its time, rate, memory and how often it said how far it was; `onAppending` is called when it says it has
 * appended its first chunk (a new phase is shown at once). Its rate is judged against issue 15 point 7 only when it
 * has the log to itself: a `live` import yields to the server on purpose (small chunks, a pause after each, a lower
 * CPU priority: point 6), so its rate is shown, not judged.
 */
async function importStep(step: string, file: string, expected: number, { live = false, onAppending }: { live?: boolean; onAppending?: () => void } = {}): Promise<void> {
  const progress: number[] = [];
  let out = '';
  /** When it first said it was appending (its first chunk appended), and writing the stream entries it put off. */
  const began: { appending?: number; indexing?: number } = {};
  const command = started(
    vmApi(['import', file], env, {
      onStdout: (t) => (out += t),
      onStderr: (t) => {
        progress.push(command.elapsedMs());
        if (began.appending === undefined && t.includes(': appending ')) {
          began.appending = command.elapsedMs();
          onAppending?.();
        }
        if (began.indexing === undefined && t.includes(': indexing ')) began.indexing = command.elapsedMs();
      },
    }),
  );
  await mustExit(command, 'import');
  const ms = command.elapsedMs();
  if (!out.includes(`${expected} events appended`)) throw new Error(`import: ${out}`);
  const gaps = [progress[0] ?? ms, ...progress.slice(1).map((t, i) => t - progress[i]!), ms - (progress.at(-1) ?? 0)];
  figure(step, 'wall time', ms, `${seconds(ms)} for ${fmt(expected)} events`);
  figure(step, 'rate', (1000 * expected) / ms, `${fmt((1000 * expected) / ms)} events/s`, live ? undefined : atLeast(100_000, 'events/s'));
  figure(step, 'progress lines', progress.length, `${progress.length}, the longest wait for one ${seconds(Math.max(...gaps))}`);
  // Where its time went: reading and checking (until its first chunk is appended), appending, the entries put off.
  const firstAppend = began.appending ?? ms;
  const entries = began.indexing === undefined ? 'none put off' : `from ${seconds(began.indexing)}`;
  figure(step, 'phases', firstAppend, `first chunk appended at ${seconds(firstAppend)}, stream entries ${entries}, done at ${seconds(ms)}`);
  memory(step, command);
}

interface Served {
  command: Command;
  call: Call;
}
/**
 * `vm-api serve`, its log to a file (`log`): when it listens, then, polling, until /readyz says ready (at most
 * `readyTarget` ms after its start) and what /healthz and /api/ said meanwhile, and its RSS then.
 */
async function serve(step: string, log: string, readyTarget: number, nodeArgs: string[] = []): Promise<Served> {
  const command = started(vmApi(['serve'], env, { stdoutFile: join(dir, log), nodeArgs }));
  const url = await listeningUrl(join(dir, log), () => !running.has(command), 20);
  const listenMs = command.elapsedMs();
  figure(step, 'listening after', listenMs, seconds(listenMs), atMost(1000, 'ms'));
  const served = { command, call: client(Number(new URL(url).port), 64) };
  await untilReady(step, served, readyTarget);
  return served;
}

/** A server started, made ready, stopped: its figures, and its peak memory. */
async function serveOnce(step: string, log: string, readyTarget: number): Promise<void> {
  const served = await serve(step, log, readyTarget);
  await stop(served);
  memory(step, served.command);
}

async function untilReady(step: string, served: Served, readyTarget: number): Promise<void> {
  let catchingUp = 0;
  let withEta = 0;
  let refused503 = 0;
  let other = 0;
  for (;;) {
    const ready = await served.call('GET', '/readyz', undefined);
    if (ready.status === 200) break;
    const health = JSON.parse((await served.call('GET', '/healthz', undefined)).body) as { status: string; warm_up: { eta_seconds: number | null } | null };
    if (health.status === 'catching_up') catchingUp++;
    if (health.warm_up?.eta_seconds != null) withEta++;
    const api = await served.call('GET', '/api/shifts/?limit=1', data.keys[0]);
    if (api.status === 503 && api.headers['retry-after'] !== undefined && api.body.startsWith('{"detail":')) refused503++;
    else if (api.status !== 200) other++;
    await sleep(250);
  }
  const readyMs = served.command.elapsedMs();
  figure(step, 'ready (/readyz 200) after', readyMs, seconds(readyMs), atMost(readyTarget, 'ms'));
  if (catchingUp + refused503 + other > 0) {
    figure(step, 'while not ready', other, `/healthz catching_up ${catchingUp} times (${withEta} with an ETA); /api/ 503 with Retry-After ${refused503} times, other answers ${other}`);
  }
  const rss = procStatus(served.command.child.pid!, 'VmRSS');
  figure(step, 'RSS once ready', rss, mb(rss));
}

async function stop(served: Served): Promise<void> {
  served.command.child.kill('SIGTERM');
  await mustExit(served.command, 'serve (SIGTERM)');
}

if (!values.reuse) {
  // 1. Import.
  console.log('1. vm-api import');
  await importStep('import', dataFile, events);

  // 2. The first serve after it (a log far ahead of an empty read model: the parallel replay, then a snapshot).
  console.log('2. first vm-api serve');
  await serveOnce('first serve', 'serve-1.log', 45_000);

  // 3. A restart from the snapshot it wrote.
  console.log('3. restart');
  await serveOnce('restart', 'serve-2.log', 3000);

  // 4. Rebuild, and a restart after it.
  console.log('4. vm-api rebuild');
  {
    let out = '';
    const command = started(vmApi(['rebuild'], env, { onStdout: (t) => (out += t) }));
    await mustExit(command, 'rebuild');
    const ms = command.elapsedMs();
    const replayed = Number(/from (\d+) events/.exec(out)?.[1] ?? NaN);
    figure('rebuild', 'wall time', ms, `${seconds(ms)} for ${fmt(replayed)} events`);
    figure('rebuild', 'rate', (1000 * replayed) / ms, `${fmt((1000 * replayed) / ms)} events/s`, atLeast(150_000, 'events/s'));
    memory('rebuild', command);
  }
}

// 5. A live import under load, into the DATA_DIR of the server restarted after the rebuild.
console.log('5. restart after the rebuild, then a live import under load');
const mixBodies: number[] = [];
{
  const nodeArgs = [...(values.profile ? ['--cpu-prof', `--cpu-prof-dir=${values.profile}`] : []), ...values['server-node-args'].split(' ').filter(Boolean)];
  const served = await serve('restart after rebuild', 'serve-3.log', 3000, nodeArgs);
  const { call } = served;
  const rand = mulberry32(SEED ^ 0x0be7);
  const queries = randomQueries(data, Number(values.queries), SEED);
  const paths: Array<{ path: string; key: string; limit: number }> = [];
  for (const q of queries) {
    const first = await call('GET', q.path, q.key);
    const { path } = withPage(q, (JSON.parse(first.body) as { count: number }).count, rand);
    // Each page once before the clock starts: no read pays for a page shown for the first time.
    mixBodies.push(Buffer.byteLength((await call('GET', path, q.key)).body));
    paths.push({ path, key: q.key, limit: q.limit });
  }

  const posts: number[] = [];
  const health: Array<{ status: string; behind: number; ms: number }> = [];
  let errors = 0;
  let pastEnd = 0;
  let importing = true;
  /** Every read: when it was due (s since the readers began) and how long it took (ms), to see when the slow ones were. */
  const reads: Array<{ at: number; ms: number }> = [];
  const since = performance.now();
  /** The mix's reads, READ_RATE a second on a clock, until `done()`: into `into`, each when it was due and how long it took. */
  const readOnClock = async (done: () => boolean, into: Array<{ at: number; ms: number }>) => {
    const every = 1000 / READ_RATE;
    const begun = performance.now();
    const inFlight: Promise<void>[] = [];
    for (let i = 0; !done(); i++) {
      const due = begun + i * every;
      if (due > performance.now()) await sleep(due - performance.now());
      const { path, key: k, limit } = paths[i % paths.length]!;
      // Timed from when it was due: a request this process could not send on time waited too.
      inFlight.push(
        call('GET', path, k).then(
          (answer) => {
            into.push({ at: (due - since) / 1000, ms: performance.now() - due });
            if (answer.status === 404 && /[?&]page=(?!1(&|$))/.test(path)) pastEnd++;
            else if (answer.status !== 200 || !isPage(answer.body, limit)) errors++;
          },
          () => void errors++,
        ),
      );
      if (inFlight.length > 1000) await Promise.all(inFlight.splice(0, 500));
    }
    await Promise.all(inFlight);
  };
  const readers = readOnClock(() => !importing, reads);
  const writer = (async () => {
    for (let n = 0; importing; n++) {
      const t0 = performance.now();
      const answer = await call('POST', '/api/sites/bulk-create/', data.keys[0], { sites: [{ title: `Operator ${SEED}.${n}` }] }).catch(() => undefined);
      posts.push(performance.now() - t0);
      if (answer?.status !== 201) errors++;
      await sleep(250);
    }
  })();
  /**
   * The server's longest event-loop delay in each half second (from its /metrics, which resets it at each read), less
   * the monitor's sampling interval its figure includes (see EVENT_LOOP_SAMPLE_MS): for a loop held d ms, d - 10 to
   * d ms, where the figure itself says d to d + 10.
   */
  const serverDelays: Array<{ ms: number; at: number }> = [];
  /** A monitor's interval between samples (ms) less the sampling interval: the delay beyond it (a lower bound). */
  const beyondSampling = (ms: number) => Math.max(0, ms - EVENT_LOOP_SAMPLE_MS);
  /** When the import said it had appended its first chunk (s since the readers began). */
  let appendsFrom: number | undefined;
  const watcher = (async () => {
    while (importing) {
      const h = JSON.parse((await call('GET', '/healthz', undefined)).body) as { status: string; lag: { positions: string; ms: number } };
      health.push({ status: h.status, behind: Number(h.lag.positions), ms: h.lag.ms });
      const metrics = (await call('GET', '/metrics', undefined)).body;
      serverDelays.push({ ms: beyondSampling(1000 * metricValue(metrics, 'nodejs_eventloop_lag_max_seconds')), at: (performance.now() - since) / 1000 });
      await sleep(500);
    }
  })();

  // This process's own event-loop delay meanwhile: read latencies are measured here, and a busy client would add its own.
  const clientDelay = monitorEventLoopDelay({ resolution: EVENT_LOOP_SAMPLE_MS });
  clientDelay.enable();
  await importStep('live import', liveFile, LIVE, { live: true, onAppending: () => (appendsFrom = (performance.now() - since) / 1000) });
  clientDelay.disable();
  const caughtUpFrom = performance.now();
  for (;;) {
    const h = JSON.parse((await call('GET', '/healthz', undefined)).body) as { lag: { positions: string } };
    if (h.lag.positions === '0') break;
    await sleep(100);
  }
  const caughtUpMs = performance.now() - caughtUpFrom;
  importing = false;
  await Promise.all([readers, writer, watcher]);

  const sortedReads = reads.map((r) => r.ms).sort((a, b) => a - b);
  const sortedPosts = posts.sort((a, b) => a - b);
  figure('live import', 'server caught up after the import ended', caughtUpMs, seconds(caughtUpMs));
  figure('live import', `reads (${fmt(READ_RATE)}/s, ${fmt(reads.length)})`, quantile(sortedReads, 0.5), `p50 ${fmt(quantile(sortedReads, 0.5), 1)} ms`);
  const delays = serverDelays.filter((d) => !Number.isNaN(d.ms)).sort((a, b) => b.ms - a.ms);
  figure(
    'live import',
    "the server's event-loop delay",
    delays[0]?.ms ?? NaN,
    `the longest in a half second: ${delays.slice(0, 5).map((d) => `${fmt(d.ms)} ms (at ${fmt(d.at, 1)} s)`).join(', ')}, …; median ${fmt(delays[delays.length >> 1]?.ms ?? NaN, 1)} ms`,
  );
  // When the slow reads were: before the import's first append (its check of the file), as the appends begin, after.
  const phase = (what: string, from: number, to: number) => {
    const ms = reads.filter((r) => r.at >= from && r.at < to).map((r) => r.ms).sort((a, b) => a - b);
    if (ms.length > 0) figure('live import', `reads ${what}`, quantile(ms, 0.99), `p50 ${fmt(quantile(ms, 0.5), 1)} ms, p99 ${fmt(quantile(ms, 0.99), 1)} ms, max ${fmt(ms.at(-1)!, 1)} ms (${fmt(ms.length)})`);
  };
  const firstAppend = appendsFrom ?? Infinity;
  phase('before the first append', 0, firstAppend);
  phase('in the first 5 s of appends', firstAppend, firstAppend + 5);
  phase('after those', firstAppend + 5, Infinity);
  const slowSeconds = [...new Set(reads.filter((r) => r.ms > 100).map((r) => Math.floor(r.at)))];
  figure(
    'live import',
    'seconds with a read over 100 ms',
    slowSeconds.length,
    `${slowSeconds.length} (${slowSeconds.length === 0 ? '' : `${slowSeconds.slice(0, 20).join(', ')}${slowSeconds.length > 20 ? ', …' : ''}; `}` +
      `the import's first chunk appended at ${appendsFrom === undefined ? 'no time' : `${fmt(appendsFrom, 1)} s`})`,
  );
  const clientLag = (ns: number) => beyondSampling(ns / 1e6);
  figure('live import', "the client's event-loop delay", clientLag(clientDelay.max), `p99 ${fmt(clientLag(clientDelay.percentile(99)), 1)} ms, max ${fmt(clientLag(clientDelay.max), 1)} ms`);
  figure('live import', 'reads p99', quantile(sortedReads, 0.99), `${fmt(quantile(sortedReads, 0.99), 1)} ms (max ${fmt(sortedReads.at(-1) ?? NaN, 1)} ms)`, atMost(10, 'ms'));
  figure('live import', `sites bulk-creates (${posts.length})`, sortedPosts.at(-1) ?? NaN, `p50 ${fmt(quantile(sortedPosts, 0.5), 1)} ms, max ${fmt(sortedPosts.at(-1) ?? NaN, 1)} ms`, atMost(1000, 'ms'));
  // The README's promise: catching_up once behind the head for a second or more (a moment behind is an append's lag).
  const behind = health.filter((h) => h.ms >= 1000);
  const untrue = behind.filter((h) => h.status !== 'catching_up');
  figure(
    'live import',
    '/healthz while behind',
    untrue.length,
    `${behind.length} of ${health.length} readings behind for 1 s or more (at most ${fmt(Math.max(0, ...health.map((h) => h.behind)))} events, ` +
      `lag.ms up to ${fmt(Math.max(0, ...health.map((h) => h.ms)))}); ${untrue.length} of them not catching_up; ` +
      `${health.filter((h) => h.behind > 1000 && h.status !== 'catching_up').length} readings over 1,000 events behind said ok` +
      (behind.length === 0 ? ' (not judged: never a second behind)' : ''),
    // Judged only when the server was a second or more behind at all: otherwise there was nothing to tell.
    behind.length > 0 ? atMost(0, 'readings', false) : undefined,
  );
  memory('live import', served.command, 'server peak RSS (VmHWM, since its start) as the import ends', false);
  // A server goes on serving after an import: the journal it grew is folded into a snapshot once the log is quiet
  // (so that the restart below loads a snapshot). Up to two minutes for it, then the restart either way.
  // The same reads go on meanwhile: a fold stalls requests too (README, known problems).
  const logFile = join(dir, 'serve-3.log');
  const foldFrom = performance.now();
  const logged = readFileSync(logFile, 'utf8').length;
  let folded = false;
  const foldReads: Array<{ at: number; ms: number }> = [];
  const foldReaders = readOnClock(() => folded, foldReads);
  while (!readFileSync(logFile, 'utf8').slice(logged).includes('journal folded into a new snapshot') && performance.now() - foldFrom < 120_000) await sleep(250);
  const foldMs = performance.now() - foldFrom;
  folded = true;
  await foldReaders;
  figure('live import', 'journal folded into a snapshot', foldMs, foldMs >= 120_000 ? 'not within 2 minutes' : `${seconds(foldMs)} after the server caught up`);
  const sortedFoldReads = foldReads.map((r) => r.ms).sort((a, b) => a - b);
  figure(
    'live import',
    `reads until the fold is done (${fmt(sortedFoldReads.length)})`,
    quantile(sortedFoldReads, 0.99),
    `p50 ${fmt(quantile(sortedFoldReads, 0.5), 1)} ms, p99 ${fmt(quantile(sortedFoldReads, 0.99), 1)} ms, max ${fmt(sortedFoldReads.at(-1) ?? NaN, 1)} ms`,
    atMost(10, 'ms'),
  );
  // An error: a read answered other than 200 with a page (see isPage), a POST other than 201, or no answer at all.
  figure('live import', 'errors', errors, `${errors} (and ${pastEnd} pages past the end of matches the import shrank, right)`, atMost(0, 'errors', false));
  // The fold is part of the server's live import: its peak counts.
  memory('live import', served.command, 'server peak RSS (VmHWM, since its start), the journal fold included');
  await stop(served);
}

// 6. A restart from the snapshot and the journal the live import left.
console.log('6. restart after the live import');
await serveOnce('restart after live import', 'serve-4.log', 3000);

// 7. The day's yardstick: the benchmark server's constant route with the mix's answer sizes, CPU per request.
console.log('7. yardstick');
const yardstick = await (async () => {
  const child = spawn(process.execPath, ['--expose-gc', join(here, 'server.js'), dir], { stdio: ['ignore', 'pipe', 'inherit'] });
  const { port } = await new Promise<{ port: number }>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', (line) => resolve(JSON.parse(line) as { port: number }));
    child.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)));
  });
  const job = join(dir, 'yardstick-job.json');
  const base = `http://127.0.0.1:${port}`;
  writeFileSync(job, JSON.stringify({ url: base, paths: mixBodies.map((b) => `/bench/constant?bytes=${b}`), headers: [], connections: 16, seconds: 4 }));
  const cpu = async () => ((await (await fetch(`${base}/bench/cpu`)).json()) as { micros: number }).micros;
  const perRequest: number[] = [];
  for (let round = 0; round < 4; round++) {
    const before = await cpu();
    const load = spawn(process.execPath, [join(here, 'load.js'), job], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    load.stdout.on('data', (c) => (out += c));
    await new Promise((resolve) => load.once('exit', resolve));
    // The first round warms the server up.
    if (round > 0) perRequest.push(((await cpu()) - before) / (JSON.parse(out) as { requests: number }).requests);
  }
  child.kill('SIGTERM');
  return perRequest.sort((a, b) => a - b)[1]!;
})();
console.log(`  yardstick: ${fmt(yardstick, 1)} µs of server CPU per constant-route request (targets below scaled by ${fmt(yardstick / 30, 2)})`);

// The verdicts.
console.log(`\noperator run, seed ${SEED}, yardstick ${fmt(yardstick, 1)} µs:`);
let failed = 0;
for (const f of figures) {
  if (!f.target) continue;
  const scale = f.target.scaled ? yardstick / 30 : 1;
  const ok = f.target.max !== undefined ? f.value <= f.target.max * scale : f.value >= f.target.min! / scale;
  if (!ok) failed++;
  const limit = f.target.max !== undefined ? f.target.max * scale : f.target.min! / scale;
  const shown = f.target.unit === 'bytes' ? mb(limit) : `${fmt(limit)} ${f.target.unit}`;
  const bound = `${f.target.max !== undefined ? '≤' : '≥'} ${shown}${f.target.scaled ? ' at this yardstick' : ''}`;
  console.log(`  ${ok ? 'PASS' : 'FAIL'}  ${f.step}: ${f.what}: ${f.shown}   [target ${bound}]`);
}
console.log(`${figures.filter((f) => f.target).length - failed} targets met, ${failed} not`);
process.exit(failed === 0 ? 0 : 1);
