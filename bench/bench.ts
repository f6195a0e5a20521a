/**
 * npm run bench [-- --shifts 1000000 --institutions 10 --seconds 4 --rounds 9 --live-seconds 10 --connections 16 --compare 100000]
 *
 * Generates shifts (with profiles and reservations) across several
 * institutions, imports them (`vm-api import`) and replays them into the
 * read model (`vm-api rebuild`), each in a process of its own as a user
 * would run them, starts the server in its own process from LMDB, and
 * then measures a mix of searches against a constant route of the same
 * server that answers bodies of the same sizes, request for request (and,
 * for comparison, against the same bodies already encoded); then
 * the mix again while 10,000 events are appended to the log by another
 * process; then one fixed query here and on a server over `--compare`
 * shifts. Prints every figure and whether it meets its target.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { type DomainEvent, eventSchemas, isEventType, streamOf } from '../src/events/catalog.js';
import { QUERY_STRINGS_REMEMBERED } from '../src/http/query-strings.js';
import { openEventStore } from '../src/runtime.js';
import { type BenchData, generate, liveEvents } from './generate.js';
import { mixRequests } from './mix.js';
import { BIN_NODE_FLAGS, CLI, metricValue } from './processes.js';
import { randomQueries, withPage } from './random-mix.js';
import { classTable, quantile, slowest as slowestQueries, type Timing, us } from './report.js';
import { mulberry32 } from '../scripts/random.js';

const { values } = parseArgs({
  options: {
    shifts: { type: 'string', default: '1000000' },
    institutions: { type: 'string', default: '10' },
    /** The smaller data set the fixed query is also timed on (0: skip). */
    compare: { type: 'string', default: '100000' },
    /** Events appended while the mix runs. */
    live: { type: 'string', default: '10000' },
    /**
     * Rounds of the mix and the constant routes, one after the other, and
     * their length. Many short rounds: this VM drifts by a fifth within a
     * minute, and a round's ratio is only fair to both if they ran on the
     * machine as it was (three rounds of 10 s printed from 66.6 % to 72.0 %
     * in full runs of nearly the same code: the median of three is one
     * round's luck).
     */
    seconds: { type: 'string', default: '4' },
    rounds: { type: 'string', default: '9' },
    /** Seed of the live events: another one for each `--reuse` run of a directory (the same events are already in its log). */
    'live-seed': { type: 'string', default: '99' },
    /** How long the mix runs while the live events are appended. */
    'live-seconds': { type: 'string', default: '10' },
    connections: { type: 'string', default: '16' },
    keep: { type: 'boolean', default: false },
    /** Write a V8 CPU profile of the server process into this folder. */
    profile: { type: 'string' },
    /** Skip import and rebuild: serve this DATA_DIR, kept by an earlier `--keep` run with the same --shifts and --institutions. */
    reuse: { type: 'string' },
    /** Only make the data directory (import, rebuild, bench-data.json) and keep it, for --reuse and stages.js. */
    prepare: { type: 'boolean', default: false },
    /** The random mix: how many distinct queries, and the seed (a fresh one when not given; printed). */
    queries: { type: 'string', default: '12000' },
    /** Sites requests already in the registry stream before bulk-creates are timed. */
    'prior-requests': { type: 'string', default: '100000' },
    seed: { type: 'string' },
  },
});
const SHIFTS = Number(values.shifts);
const INSTITUTIONS = Number(values.institutions);
const SECONDS = Number(values.seconds);
const LIVE_SECONDS = Number(values['live-seconds']);
const ROUNDS = Number(values.rounds);
const CONNECTIONS = Number(values.connections);
const COMPARE = Number(values.compare);
const LIVE = Number(values.live);
const here = new URL('.', import.meta.url).pathname;

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const mb = (bytes: number) => `${fmt(bytes / 1024 / 1024)} MB`;
const results: Array<[string, string, string]> = [];
const report = (name: string, value: string, target = '') => {
  results.push([name, value, target]);
  console.log(`  ${name}: ${value}${target ? `   [${target}]` : ''}`);
};
const verdict = (ok: boolean, text: string) => `${ok ? 'PASS' : 'FAIL'} target ${text}`;

const dir = values.reuse ?? mkdtempSync(join(tmpdir(), 'vm-bench-'));
const compareDir = mkdtempSync(join(tmpdir(), 'vm-bench-compare-'));
/** Where the load generator's jobs are written. */
const jobDir = mkdtempSync(join(tmpdir(), 'vm-bench-jobs-'));
// Never leave servers or data behind, whatever ends this run.
const servers: ChildProcess[] = [];
process.on('exit', () => {
  for (const child of servers) child.kill('SIGKILL');
  rmSync(jobDir, { recursive: true, force: true });
  if (!values.keep) for (const d of values.reuse ? [compareDir] : [dir, compareDir]) rmSync(d, { recursive: true, force: true });
});

/** Run `vm-api <args>` over `dataDir` in its own process, as a user would (the bin's node flags too); its wall time in seconds. */
async function vmApi(dataDir: string, args: string[]): Promise<{ seconds: number; output: string }> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [...BIN_NODE_FLAGS, CLI, ...args], { env: { ...process.env, DATA_DIR: dataDir }, stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  const code = await new Promise((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`vm-api ${args.join(' ')} exited with ${code}`);
  return { seconds: (performance.now() - t0) / 1000, output };
}

/** Drop the generated lines (once they are in a file or the log) and collect. */
function letGoOfLines(data: BenchData): void {
  data.lines.length = 0;
  globalThis.gc?.();
}

/**
 * Write the data set's events to a file and import it into `into` with
 * `vm-api import` (the lines are let go of first: this process's heap
 * stays out of the measurements); the import's wall time.
 */
async function importData(into: string, data: BenchData): Promise<{ events: number; seconds: number }> {
  const file = join(into, 'bench.ndjson');
  // Written in parts: the whole file is more than one string can hold.
  const fd = openSync(file, 'w');
  for (let i = 0; i < data.lines.length; i += 100_000) writeSync(fd, data.lines.slice(i, i + 100_000).join('\n') + '\n');
  closeSync(fd);
  const events = data.lines.length;
  letGoOfLines(data);
  const { seconds, output } = await vmApi(into, ['import', file]);
  rmSync(file);
  if (!output.includes(`${events} events appended`)) throw new Error(`import: ${output}`);
  return { events, seconds };
}

interface Ready {
  port: number;
  startupMs: number;
  rss: number;
  eventsApplied: number;
}
interface Server {
  base: string;
  ready: Ready;
  stop(): Promise<void>;
}
/** The server in its own process over `from`, as `vm-api serve` runs it (with the bin's node flags). */
async function startServer(from: string, profileDir?: string, args: string[] = []): Promise<Server> {
  const profiling = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  const child = spawn(process.execPath, [...BIN_NODE_FLAGS, '--expose-gc', '--max-old-space-size=4096', ...profiling, join(here, 'server.js'), from, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  servers.push(child);
  const rl = createInterface({ input: child.stdout! });
  const ready = await new Promise<Ready>((resolve, reject) => {
    rl.once('line', (line) => resolve(JSON.parse(line) as Ready));
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
  return {
    base: `http://127.0.0.1:${ready.port}`,
    ready,
    async stop() {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

interface Timed {
  ms: number;
  serverMs: number;
  bytes: number;
}
/** One request, timed by the client and by the server (its Server-Timing header). */
async function timed(base: string, path: string, key: string): Promise<Timed> {
  const t0 = performance.now();
  const res = await fetch(base + path, { headers: { 'api-key': key } });
  const body = await res.text();
  const ms = performance.now() - t0;
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${body}`);
  const serverMs = Number(/dur=([\d.]+)/.exec(res.headers.get('server-timing') ?? '')?.[1] ?? NaN);
  return { ms, serverMs, bytes: Buffer.byteLength(body) };
}
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
/** The median of `n` warm runs (after as many unmeasured ones: a fresh server has its code to compile first). */
async function fixedQuery(base: string, path: string, key: string, n = 300): Promise<{ ms: number; serverMs: number }> {
  for (let i = 0; i < n; i++) await timed(base, path, key);
  const runs: Timed[] = [];
  for (let i = 0; i < n; i++) runs.push(await timed(base, path, key));
  return { ms: median(runs.map((r) => r.ms)), serverMs: median(runs.map((r) => r.serverMs)) };
}

console.log(`benchmark: ${fmt(SHIFTS)} shifts, ${INSTITUTIONS} institutions, DATA_DIR ${dir}`);

// 1. Generate and import.
const data = generate(SHIFTS, INSTITUTIONS);
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
report(
  'data',
  `${fmt(sum(data.counts))} shifts, ${fmt(sum(data.reservations))} reservations, ${fmt(sum(data.profiles))} profiles, ` +
    `${fmt(data.lines.length)} events; largest institution ${fmt(data.counts[0]!)} shifts`,
);
if (values.reuse) letGoOfLines(data);
else {
  // What the random mix draws its values from, for --reuse runs and stages.js.
  writeFileSync(join(dir, 'bench-data.json'), JSON.stringify({ ...data, lines: [] }));
  const { events, seconds } = await importData(dir, data);
  const rate = events / seconds;
  report('import (vm-api import)', `${fmt(events)} events in ${fmt(seconds, 2)} s = ${fmt(rate)} events/s`, verdict(rate >= 50_000, '≥ 50,000 events/s'));

  // 2. Replay the log into the read model.
  const rebuild = await vmApi(dir, ['rebuild']);
  const replayed = Number(/from (\d+) events/.exec(rebuild.output)?.[1] ?? NaN);
  const replayRate = replayed / rebuild.seconds;
  report(
    'replay (vm-api rebuild)',
    `${fmt(replayed)} events in ${fmt(rebuild.seconds, 2)} s = ${fmt(replayRate)} events/s`,
    verdict(replayRate >= 100_000, '≥ 100,000 events/s'),
  );
}

if (values.prepare) {
  console.log(`data directory kept: ${dir}`);
  values.keep = true;
  process.exit(0);
}

// 3. Start the server from LMDB in its own process.
const server = await startServer(dir, values.profile);
const base = server.base;
const { ready } = server;
report('start-up from LMDB', `${fmt(ready.startupMs)} ms (${ready.eventsApplied} events replayed)`, verdict(ready.startupMs <= 5000, '≤ 5,000 ms'));
report('resident memory after start-up', mb(ready.rss), verdict(ready.rss <= 1.5 * 1024 ** 3, '≤ 1.5 GB'));

// 4. The search mix.
const listed = async (path: string) =>
  Promise.all(data.keys.map(async (key) => ((await (await fetch(`${base}${path}?limit=1`, { headers: { 'api-key': key } })).json()) as { count: number }).count));
const counts = { shifts: await listed('/api/shifts/'), reservations: await listed('/api/reservations/'), profiles: await listed('/api/profiles/') };
const requests = mixRequests(data, counts);
const sizes: number[] = [];
let slowest = { ms: 0, serverMs: 0, path: '' };
// Each query alone, warm: the median of four timed runs after a first one.
for (const { path, key } of requests) {
  const runs: Timed[] = [];
  for (let rep = 0; rep < 5; rep++) runs.push(await timed(base, path, key));
  sizes.push(runs[0]!.bytes);
  const ms = median(runs.slice(1).map((r) => r.ms));
  if (ms > slowest.ms) slowest = { ms, serverMs: median(runs.slice(1).map((r) => r.serverMs)), path };
}
const meanSize = sizes.reduce((a, b) => a + b, 0) / sizes.length;
report('search mix', `${requests.length} distinct queries, mean body ${fmt(meanSize)} bytes`);
report(
  'slowest single query (alone, warm, median of 4)',
  `${fmt(slowest.ms, 1)} ms with the client, ${fmt(slowest.serverMs, 2)} ms in the server  ${slowest.path}`,
  verdict(slowest.ms <= 20, '≤ 20 ms'),
);

interface Load {
  rps: number;
  /** Server CPU time (user + system) per request, µs. */
  cpu: number;
  p50: number;
  p99: number;
  requests: number;
  errors: number;
  non2xx: number;
}
async function load(paths: string[], headers: Record<string, string>[], seconds: number, on = base): Promise<Load> {
  const job = join(jobDir, 'load-job.json');
  writeFileSync(job, JSON.stringify({ url: on, paths, headers, connections: CONNECTIONS, seconds }));
  const cpu = async () => ((await (await fetch(`${on}/bench/cpu`)).json()) as { micros: number }).micros;
  const before = await cpu();
  const child = spawn(process.execPath, [join(here, 'load.js'), job], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (c) => (out += c));
  await new Promise((resolve) => child.once('exit', resolve));
  const result = JSON.parse(out) as Omit<Load, 'cpu'>;
  return { ...result, cpu: ((await cpu()) - before) / result.requests };
}
const mixPaths = requests.map((r) => r.path);
const mixHeaders = requests.map((r) => ({ 'api-key': r.key }));
// The yardstick: a constant route outside /api/ (no key, no hooks), as every earlier run measured it.
const constPaths = sizes.map((s) => `/bench/constant?bytes=${s}`);
const bufferPaths = sizes.map((s) => `/bench/constant-buffer?bytes=${s}`);
const noHeaders = sizes.map(() => ({}));
// The same constant route under /api/, behind a key: through every hook a search passes (the production surface's cost).
const apiConstPaths = sizes.map((s) => `/api/bench/constant?bytes=${s}`);
const keyedHeaders = sizes.map(() => ({ 'api-key': data.keys[0]! }));

await load(mixPaths, mixHeaders, 2); // warm-up
await load(constPaths, noHeaders, 2);
await load(bufferPaths, noHeaders, 2);
// Rounds of one and the others, so that the machine drifting (it does, by
// a fifth, on a shared VM) weighs on all alike; each round's ratio, then
// their median.
type Round = { search: Load; constant: Load; floor: Load };
const rounds: Round[] = [];
for (let r = 0; r < ROUNDS; r++) {
  const search = await load(mixPaths, mixHeaders, SECONDS);
  const constant = await load(constPaths, noHeaders, SECONDS);
  const floor = await load(bufferPaths, noHeaders, SECONDS);
  rounds.push({ search, constant, floor });
  console.log(
    `    round ${r + 1}: mix ${fmt(search.rps)} req/s (p99 ${search.p99} ms, ${fmt(search.cpu)} µs CPU), ` +
      `constant ${fmt(constant.rps)} req/s (p99 ${constant.p99} ms, ${fmt(constant.cpu)} µs CPU): ${fmt((100 * search.rps) / constant.rps, 1)} %; ` +
      `encoded constant ${fmt(floor.rps)} req/s (${fmt(floor.cpu)} µs CPU): ${fmt((100 * search.rps) / floor.rps, 1)} %`,
  );
}
const middle = (pick: (round: Round) => number) => median(rounds.map(pick));
const summary = (of: (round: Round) => Load) => ({
  rps: middle((r) => of(r).rps),
  p50: middle((r) => of(r).p50),
  p99: middle((r) => of(r).p99),
  cpu: middle((r) => of(r).cpu),
});
const search = summary((r) => r.search);
const constant = summary((r) => r.constant);
const floor = summary((r) => r.floor);
const failures = rounds.reduce((n, r) => n + r.search.errors + r.search.non2xx, 0);
const medians = `median of ${ROUNDS} rounds of ${SECONDS} s`;
report('constant route (same bytes)', `${fmt(constant.rps)} req/s, p50 ${constant.p50} ms, p99 ${constant.p99} ms, server CPU ${fmt(constant.cpu)} µs/request (${medians})`);
report(
  'search mix',
  `${fmt(search.rps)} req/s, p50 ${search.p50} ms, p99 ${search.p99} ms, server CPU ${fmt(search.cpu)} µs/request (${medians}; errors and non-2xx: ${failures})`,
);
// Each round's mix and constant ran back to back, on the machine as it then
// was: the median of the rounds' ratios (the ratio of the two medians can
// pair a fast round of one with a slow round of the other).
const share = median(rounds.map((r) => r.search.rps / r.constant.rps));
report(
  'search mix / constant route',
  `${fmt(share * 100, 1)} % (median of the rounds' ratios; ratio of the medians ${fmt((100 * search.rps) / constant.rps, 1)} %)`,
  verdict(share >= 0.7, '≥ 70 %'),
);
report('search mix p99 / constant p99', `${fmt(search.p99 / constant.p99, 2)}×`, verdict(search.p99 <= 2 * constant.p99, '≤ 2×'));
report(
  'for comparison: constant route with the bodies already encoded',
  `${fmt(floor.rps)} req/s, p99 ${floor.p99} ms, server CPU ${fmt(floor.cpu)} µs/request; search mix / it: ${fmt(100 * median(rounds.map((r) => r.search.rps / r.floor.rps)), 1)} %`,
);
// The mix repeats its queries, so the server reads each query string once
// (src/http/query-strings.ts). The same mix with every query string new
// (an ignored parameter numbered past what the server remembers; bodies a
// few bytes longer, for the links keep it) shows what reading them costs.
const FRESH_ROUNDS = 3;
// The constant route gets as many distinct paths: the load generator is
// slower over thousands of them, and must be as slow for both.
const numbered = (paths: string[]) =>
  Array.from({ length: 3 * QUERY_STRINGS_REMEMBERED }, (_, k) => {
    const path = paths[k % paths.length]!;
    return `${path}${path.includes('?') ? '&' : '?'}fresh=${k}`;
  });
const freshPaths = numbered(mixPaths);
const freshConstPaths = numbered(constPaths);
const freshHeaders = freshPaths.map((_, k) => mixHeaders[k % mixHeaders.length]!);
const freshNoHeaders = freshPaths.map(() => ({}));
const freshRounds: Array<{ fresh: Load; constant: Load }> = [];
for (let r = 0; r < FRESH_ROUNDS; r++) {
  const fresh = await load(freshPaths, freshHeaders, SECONDS);
  freshRounds.push({ fresh, constant: await load(freshConstPaths, freshNoHeaders, SECONDS) });
}
const freshMedian = (pick: (load: Load) => number) => median(freshRounds.map((r) => pick(r.fresh)));
report(
  'for comparison: search mix with every query string new',
  `${fmt(freshMedian((l) => l.rps))} req/s, p99 ${freshMedian((l) => l.p99)} ms, server CPU ${fmt(freshMedian((l) => l.cpu))} µs/request ` +
    `(the constant route over as many paths: ${fmt(median(freshRounds.map((r) => r.constant.rps)))} req/s) ` +
    `(errors and non-2xx: ${freshRounds.reduce((n, r) => n + r.fresh.errors + r.fresh.non2xx, 0)}); ` +
    `/ constant route: ${fmt(100 * median(freshRounds.map((r) => r.fresh.rps / r.constant.rps)), 1)} % (median of ${FRESH_ROUNDS} rounds of ${SECONDS} s)`,
);

// The production surface (compression, ETags, metrics, rate limit, CORS and security headers) costs what, and gzip?
// The same mix asking for gzip here; then on a server over the same data with the surface off.
{
  const SURFACE_ROUNDS = 3;
  const gzipHeaders = mixHeaders.map((h) => ({ ...h, 'accept-encoding': 'gzip' }));
  const gzipRounds: Array<{ gzip: Load; plain: Load }> = [];
  for (let r = 0; r < SURFACE_ROUNDS; r++) gzipRounds.push({ gzip: await load(mixPaths, gzipHeaders, SECONDS), plain: await load(mixPaths, mixHeaders, SECONDS) });
  report(
    'search mix asking for gzip',
    `${fmt(median(gzipRounds.map((r) => r.gzip.rps)))} req/s, p99 ${median(gzipRounds.map((r) => r.gzip.p99))} ms, ` +
      `${fmt(median(gzipRounds.map((r) => r.gzip.cpu)))} µs CPU/request; ${fmt(100 * median(gzipRounds.map((r) => r.gzip.rps / r.plain.rps)), 1)} % of the plain mix (median of ${SURFACE_ROUNDS} rounds)`,
  );
  // Mix and constant route through the same hooks, here; then the mix on a server over the same data with the surface off.
  const bare = await startServer(dir, undefined, ['--bare']);
  // Both with what earlier searches wanted made in the background made now: no background work during the rounds.
  for (const on of [base, bare.base]) await fetch(`${on}/bench/settle`);
  const bareRounds: Array<{ on: Load; onConstant: Load; off: Load; offConstant: Load }> = [];
  await load(mixPaths, mixHeaders, 2, bare.base);
  for (let r = 0; r < SURFACE_ROUNDS; r++) {
    bareRounds.push({
      on: await load(mixPaths, mixHeaders, SECONDS),
      onConstant: await load(apiConstPaths, keyedHeaders, SECONDS),
      off: await load(mixPaths, mixHeaders, SECONDS, bare.base),
      offConstant: await load(apiConstPaths, keyedHeaders, SECONDS, bare.base),
    });
  }
  await bare.stop();
  const mid = (pick: (r: (typeof bareRounds)[number]) => number) => median(bareRounds.map(pick));
  report(
    'search mix with the production surface on / off',
    `${fmt(mid((r) => r.on.rps))} / ${fmt(mid((r) => r.off.rps))} req/s (${fmt(mid((r) => r.on.cpu))} / ${fmt(mid((r) => r.off.cpu))} µs CPU/request): ` +
      `on is ${fmt(100 * mid((r) => r.on.rps / r.off.rps), 1)} % of off (median of ${SURFACE_ROUNDS} rounds of ${SECONDS} s)`,
  );
  report(
    'constant route under /api/ with the surface on / off',
    `${fmt(mid((r) => r.onConstant.rps))} / ${fmt(mid((r) => r.offConstant.rps))} req/s (${fmt(mid((r) => r.onConstant.cpu))} / ${fmt(mid((r) => r.offConstant.cpu))} µs CPU/request)`,
  );
  const surfaceShare = mid((r) => r.on.rps / r.onConstant.rps);
  report(
    'search mix / constant route, both through the surface',
    `${fmt(100 * surfaceShare, 1)} % (off: ${fmt(100 * mid((r) => r.off.rps / r.offConstant.rps), 1)} %)`,
    verdict(surfaceShare >= 0.8, '≥ 80 %'),
  );
}

/** The day's yardstick over 30 µs (the constant route's server CPU per request): time targets are for a 30 µs day. */
let scale = 1;

// 5. The random mix: queries drawn from the whole parameter space (random-mix.ts), pages up to the last.
{
  const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
  const queries = randomQueries(data, Number(values.queries), seed);
  const json = async (path: string, key: string) => (await (await fetch(base + path, { headers: { 'api-key': key } })).json()) as { count: number };
  /** Run `work` over `items`, `n` at a time. */
  const pool = async <T, U>(items: readonly T[], n: number, work: (item: T) => Promise<U>): Promise<U[]> => {
    const out: U[] = new Array(items.length);
    let next = 0;
    await Promise.all(Array.from({ length: n }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await work(items[i]!);
      }
    }));
    return out;
  };
  const counts = await pool(queries, 8, async (q) => (await json(q.path, q.key)).count);
  const rand = mulberry32(seed ^ 0x5eed);
  const paged = queries.map((q, i) => ({ ...withPage(q, counts[i]!, rand), key: q.key, count: counts[i]! }));
  // Each once (what the server would have been asked before), then what those wanted made, then each alone.
  await pool(paged, 4, (q) => timed(base, q.path, q.key));
  const settled = (await (await fetch(`${base}/bench/settle`)).json()) as { ms: number };
  const timings: Timing[] = [];
  const bodies: number[] = [];
  for (const q of paged) {
    const run = await timed(base, q.path, q.key);
    timings.push({ ms: run.serverMs, cls: q.cls, path: q.path, count: q.count });
    bodies.push(run.bytes);
  }
  report(
    'random mix',
    `seed ${seed}: ${fmt(paged.length)} distinct queries over ${new Set(queries.map((q) => q.kinds)).size} shapes, mean body ${fmt(bodies.reduce((a, b) => a + b, 0) / bodies.length)} bytes ` +
      `(background work they wanted, rank matrices and zone maps, finished in ${fmt(settled.ms)} ms)`,
  );
  console.log('  server time per request, each query alone:');
  classTable(timings, 30);
  slowestQueries(timings, 10);
  // The same ten again, three times each, alone: slow every time, or slow once (a collection, or something made in
  // that request: zone maps were, until they were made between requests)? The verdict below stays on the first time.
  const keyOf = new Map(paged.map((q) => [q.path, q.key]));
  console.log('  the 10 slowest again, three times each (server):');
  for (const t of [...timings].sort((a, b) => b.ms - a.ms).slice(0, 10)) {
    const again: number[] = [];
    for (let i = 0; i < 3; i++) again.push((await timed(base, t.path, keyOf.get(t.path)!)).serverMs);
    console.log(`  ${us(t.ms).padStart(8)} first, then ${again.map(us).join(', ')}`);
  }
  const paths = paged.map((q) => q.path);
  const headers = paged.map((q) => ({ 'api-key': q.key }));
  const constants = bodies.map((b) => `/bench/constant?bytes=${b}`);
  const none = bodies.map(() => ({}));
  // The same bodies from the constant route under /api/, with the same keys: through every hook the searches pass.
  const apiConstants = bodies.map((b) => `/api/bench/constant?bytes=${b}`);
  await load(paths, headers, 2);
  await load(constants, none, 2);
  const randomRounds: Array<{ mix: Load; constant: Load; apiConstant: Load }> = [];
  for (let r = 0; r < ROUNDS; r++) {
    const mix = await load(paths, headers, SECONDS);
    const constant = await load(constants, none, SECONDS);
    const apiConstant = await load(apiConstants, headers, SECONDS);
    randomRounds.push({ mix, constant, apiConstant });
    console.log(
      `    round ${r + 1}: random mix ${fmt(mix.rps)} req/s (p99 ${mix.p99} ms, ${fmt(mix.cpu)} µs CPU), constant ${fmt(constant.rps)} req/s ` +
        `(p99 ${constant.p99} ms, ${fmt(constant.cpu)} µs CPU): ${fmt((100 * mix.rps) / constant.rps, 1)} %; ` +
        `constant under /api/ ${fmt(apiConstant.rps)} req/s (${fmt(apiConstant.cpu)} µs CPU): ${fmt((100 * mix.rps) / apiConstant.rps, 1)} %`,
    );
  }
  const yardstick = median(randomRounds.map((r) => r.constant.cpu));
  scale = yardstick / 30;
  const worst = Math.max(...timings.map((t) => t.ms));
  // The mix passes every hook of /api/ (key, rate limit, ETag, compression, metrics: issue 16's surface, whose own cost
  // its point 8 judges against the constant route through the same hooks); the engine's target is judged against the
  // constant route through those same hooks too, so that the surface's cost is not charged to the engine twice. The
  // ratio to the bare constant route (no key, no hooks) is printed beside it.
  const ratio = median(randomRounds.map((r) => r.mix.rps / r.apiConstant.rps));
  const bareRatio = median(randomRounds.map((r) => r.mix.rps / r.constant.rps));
  const mixP99 = median(randomRounds.map((r) => r.mix.p99));
  const constantP99 = median(randomRounds.map((r) => r.apiConstant.p99));
  report('yardstick (the constant route\'s server CPU per request)', `${fmt(yardstick)} µs: time targets scaled by ${fmt(scale, 2)}`);
  report(
    'random mix: slowest query alone (server)',
    `${fmt(worst, 2)} ms`,
    verdict(worst <= 5 * scale, `≤ ${fmt(5 * scale, 1)} ms (5 ms at 30 µs)`),
  );
  report(
    'random mix / constant route under /api/ (the same keys and hooks)',
    `${fmt(100 * ratio, 1)} % (median of ${ROUNDS} rounds' ratios; errors and non-2xx ${randomRounds.reduce((n, r) => n + r.mix.errors + r.mix.non2xx, 0)}; ` +
      `server CPU ${fmt(median(randomRounds.map((r) => r.mix.cpu)))} µs/request against ${fmt(median(randomRounds.map((r) => r.apiConstant.cpu)))})`,
    verdict(ratio >= 0.7, '≥ 70 %'),
  );
  report('random mix p99 / constant under /api/ p99', `${mixP99} / ${constantP99} ms`, verdict(mixP99 <= 2 * constantP99, '≤ 2×'));
  report(
    'for comparison: random mix / bare constant route (no key, no hooks)',
    `${fmt(100 * bareRatio, 1)} % (that route: ${fmt(yardstick)} µs CPU/request)`,
  );
}

// 5b. Sync: the hours report's query (reservation search) and the change feed, on the largest institution.
{
  const key = data.keys[0]!;
  const rand = mulberry32(Number(values.seed ?? 7) ^ 0x51c);
  const pickOf = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const line = (xs: number[]) => {
    const sorted = [...xs].sort((a, b) => a - b);
    return `median ${fmt(median(sorted), 2)} ms, p99 ${fmt(quantile(sorted, 0.99), 2)} ms, max ${fmt(sorted[sorted.length - 1]!, 2)} ms`;
  };
  // Date windows of a day, a week or a month over the institution's shifts, in every order, at any page.
  const [first, last] = data.pools[0]!.startDays;
  const days = Math.round((last - first) / 86_400_000);
  const windows: string[] = [];
  for (let i = 0; i < 300; i++) {
    const width = pickOf([1, 7, 31]);
    const from = first + Math.floor(rand() * Math.max(1, days - width)) * 86_400_000;
    const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    const ordering = pickOf(['', 'shift_start_at', '-shift_start_at', 'logged_hours', '-logged_hours', 'created_at', '-updated_at']);
    const extra = pickOf(['', '', '&status=6', `&category.id=${pickOf(data.pools[0]!.categories).id}`, '&logged_hours.gte=3']);
    windows.push(`/api/reservations/search/?shift_date.gte=${day(from)}&shift_date.lt=${day(from + width * 86_400_000)}${extra}${ordering ? `&ordering=${ordering}` : ''}&limit=100`);
  }
  const times: number[] = [];
  let matched = 0;
  for (const path of windows) {
    const { count } = (await (await fetch(base + path, { headers: { 'api-key': key } })).json()) as { count: number };
    matched += count;
    const page = 1 + Math.floor(rand() * Math.max(1, Math.ceil(count / 100)));
    const paged = `${path}&page=${page}`;
    await timed(base, paged, key);
    times.push((await timed(base, paged, key)).serverMs);
  }
  const worst = Math.max(...times);
  report(
    'reservation search (hours report: a day, week or month of shift dates, any order and page, largest institution)',
    `${windows.length} queries, ${fmt(matched / windows.length)} reservations matched on average; server ${line(times)}`,
    verdict(worst <= 5 * scale, `max ≤ ${fmt(5 * scale, 1)} ms (5 ms at 30 µs)`),
  );

  // The change feed: the whole of it a thousand at a time, then pages of 100 after cursors met on the way.
  const walkStarted = performance.now();
  const pageTimes: number[] = [];
  const cursors: string[] = [];
  let entries = 0;
  let cursor: string | null = null;
  for (;;) {
    const path = `/api/changes/?limit=1000${cursor ? `&after=${cursor}` : ''}`;
    const t0 = performance.now();
    const res = await fetch(base + path, { headers: { 'api-key': key } });
    const body = (await res.json()) as { results: Array<{ cursor: string }>; next_cursor: string | null };
    pageTimes.push(performance.now() - t0);
    if (body.results.length === 0) break;
    entries += body.results.length;
    for (let i = 0; i < body.results.length; i += 97) cursors.push(body.results[i]!.cursor);
    cursor = body.next_cursor;
  }
  const walkSeconds = (performance.now() - walkStarted) / 1000;
  report(
    'change feed: the largest institution\'s whole feed, 1,000 a page',
    `${fmt(entries)} changes in ${fmt(walkSeconds, 2)} s = ${fmt(entries / walkSeconds)} changes/s; a page with the client ${line(pageTimes)}`,
  );
  const feedTimes: number[] = [];
  for (let i = 0; i < 300; i++) {
    const path = `/api/changes/?limit=100&after=${pickOf(cursors)}`;
    await timed(base, path, key);
    feedTimes.push((await timed(base, path, key)).serverMs);
  }
  report('change feed: a page of 100 after a random cursor', `server ${line(feedTimes)}`, verdict(Math.max(...feedTimes) <= 5 * scale, `max ≤ ${fmt(5 * scale, 1)} ms`));
}

// 6. The mix again while another process appends events to the log.
if (LIVE > 0) {
  // Appended as a writer service would: validated events straight to their streams.
  const live = liveEvents(data, LIVE, Number(values['live-seed'])).map(({ id, type, data: fields }) => {
    if (!isEventType(type)) throw new Error(`not an event type: ${type}`);
    const event = { type, data: eventSchemas[type].parse(fields) } as DomainEvent;
    return { stream: streamOf(event), events: [{ id, type, data: event.data }] };
  });
  const store = openEventStore({ DATA_DIR: dir, EVENTSTORE_URL: undefined });
  const before = (await (await fetch(`${base}/healthz`)).json()) as { events_applied: number };
  const batch = 50;
  const interval = (LIVE_SECONDS * 1000 * 0.8) / Math.ceil(live.length / batch);
  const appending = (async () => {
    for (let i = 0; i < live.length; i += batch) {
      const due = performance.now() + interval;
      await store.appendMany(live.slice(i, i + batch));
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    }
  })();
  const during = await load(mixPaths, mixHeaders, LIVE_SECONDS);
  await appending;
  const head = await store.head();
  const t0 = performance.now();
  for (;;) {
    const health = (await (await fetch(`${base}/healthz`)).json()) as { position: { commit: string }; events_applied: number };
    if (BigInt(health.position.commit) >= head.commit) {
      report(
        `search mix while ${fmt(live.length)} events are appended`,
        `${fmt(during.rps)} req/s, p50 ${during.p50} ms, p99 ${during.p99} ms (errors ${during.errors}, non-2xx ${during.non2xx}); ` +
          `${fmt(health.events_applied - before.events_applied)} applied, ${fmt(performance.now() - t0)} ms after the last append`,
        // Issue 14 point 3: index maintenance under live appends keeps this window's p99 at 5 ms or less (at 30 µs).
        verdict(during.p99 <= 5 * scale, `p99 ≤ ${fmt(5 * scale, 1)} ms (5 ms at 30 µs)`),
      );
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await store.close();
}
// 7. Sites writes after a long history: `--prior-requests` bulk-creates with an Idempotency-Key each already in the
// registry stream of the largest institution (appended as another writer would), then bulk-creates timed one at a time.
const PRIOR = Number(values['prior-requests']);
if (PRIOR > 0) {
  const institution_id = data.institutionIds[0]!;
  const store = openEventStore({ DATA_DIR: dir, EVENTSTORE_URL: undefined });
  const stream = `site-registry-${institution_id}`;
  const known = (await store.readStream(stream)).filter((e) => e.type === 'SiteRequestHandled').length;
  const occurred_at = new Date().toISOString();
  for (let i = known; i < PRIOR; i += 2_500) {
    const events = [];
    for (let k = i; k < Math.min(PRIOR, i + 2_500); k++) {
      const site_id = randomUUID();
      const site = { institution_id, occurred_at, site_id, title: `Prior site ${k}` };
      const body = { count: 1, results: [{ id: site_id, title: site.title, address: '', created_at: occurred_at, updated_at: occurred_at, users_count: 0 }] };
      events.push({ id: randomUUID(), type: 'SiteCreated', data: site });
      events.push({ id: randomUUID(), type: 'SiteRequestHandled', data: { institution_id, occurred_at, idempotency_key: `prior-${k}`, request_sha256: '0'.repeat(64), status: 201, response: body } });
    }
    await store.appendMany([{ stream, events }]);
  }
  const head = await store.head();
  await store.close();
  for (;;) {
    const health = (await (await fetch(`${base}/healthz`)).json()) as { position: { commit: string } };
    if (BigInt(health.position.commit) >= head.commit) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const post = async (k: number) => {
    const t0 = performance.now();
    const res = await fetch(`${base}/api/sites/bulk-create/`, {
      method: 'POST',
      headers: { 'api-key': data.keys[0]!, 'content-type': 'application/json', 'idempotency-key': `bench-${randomUUID()}` },
      body: JSON.stringify({ sites: [{ title: `Bench site ${randomUUID()}`, address: `${k} Main St` }] }),
    });
    await res.text();
    if (res.status !== 201) throw new Error(`bulk-create: ${res.status}`);
    return performance.now() - t0;
  };
  // The first folds what was appended since the server folded the registry when it became ready (on a fresh directory,
  // the whole history), a page at a time between other requests: its time is printed, not judged.
  const first = await post(0);
  for (let k = 1; k < 20; k++) await post(k);
  const times: number[] = [];
  for (let k = 0; k < 300; k++) times.push(await post(k));
  times.sort((a, b) => a - b);
  const p50 = times[150]!;
  const p99 = times[296]!;
  report(
    `sites bulk-create after ${fmt(PRIOR)} prior requests (300, one at a time, with the client)`,
    `p50 ${fmt(p50, 2)} ms, p99 ${fmt(p99, 2)} ms (the first, folding what was appended since the server started: ${fmt(first)} ms)`,
    verdict(p50 <= 5 * scale && p99 <= 20 * scale, `p50 ≤ ${fmt(5 * scale, 1)} ms, p99 ≤ ${fmt(20 * scale, 1)} ms (5 and 20 ms at 30 µs)`),
  );
}

type Memory = { rss: number; heapUsed: number; arrayBuffers: number };
const memory = (await (await fetch(`${base}/bench/memory`)).json()) as { now: Memory; collected: Memory };
// What the searches made along the way (rank matrices, positions), from the server's own metrics.
const matrixBytes = metricValue(await (await fetch(`${base}/metrics`)).text(), 'read_model_rank_matrix_bytes');
report(
  'resident memory after the mixes',
  `${mb(memory.now.rss)} (rank matrices and positions the searches made: ${mb(matrixBytes)}; heap ${mb(memory.now.heapUsed)}, ` +
    `array buffers ${mb(memory.now.arrayBuffers)}; after a full collection: ${mb(memory.collected.rss)}, heap ${mb(memory.collected.heapUsed)}, ` +
    `array buffers ${mb(memory.collected.arrayBuffers)})`,
  // Issue 14: resident memory with the new structures ≤ 1.5 GB; they are made as searches want them, so after the mixes.
  verdict(memory.now.rss <= 1.5 * 1024 ** 3, '≤ 1.5 GB with what the searches made'),
);

// 8. One fixed query, here and over a tenth of the data.
const fixedPath = `/api/shifts/search/?shift_date.gte=2026-06-01&shift_date.lt=2026-06-08&limit=10`;
const fixedHere = await fixedQuery(base, fixedPath, data.keys[0]!);
await server.stop();
if (COMPARE > 0 && COMPARE < SHIFTS) {
  const small = generate(COMPARE, INSTITUTIONS);
  await importData(compareDir, small);
  const other = await startServer(compareDir);
  const fixedThere = await fixedQuery(other.base, fixedPath, small.keys[0]!);
  await other.stop();
  const ratio = fixedHere.serverMs / fixedThere.serverMs;
  report(
    `fixed query, ${fmt(COMPARE)} vs ${fmt(SHIFTS)} shifts (median of 300)`,
    `in the server ${fmt(fixedThere.serverMs, 3)} vs ${fmt(fixedHere.serverMs, 3)} ms = ${fmt(ratio, 2)}×; ` +
      `with the client ${fmt(fixedThere.ms, 2)} vs ${fmt(fixedHere.ms, 2)} ms  ${fixedPath}`,
    verdict(ratio <= 1.5, '≤ 1.5×'),
  );
}

console.log('\nsummary');
for (const [name, value, target] of results) console.log(`| ${name} | ${value} | ${target} |`);
