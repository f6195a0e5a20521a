/**
 * npm run bench [-- --shifts 200000 --institutions 5 --seconds 10 --connections 16]
 *
 * Generates shifts across several institutions, imports them (the CLI's
 * import path), replays them into the read model (rebuild), starts the
 * server in its own process from LMDB, and then measures a mix of shift
 * searches against a constant route of the same server that answers bodies
 * of the same sizes, request for request. Prints every figure and whether
 * it meets its target.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { importEvents } from '../src/importer/import.js';
import { openEventStore, openRuntime } from '../src/runtime.js';
import { generate } from './generate.js';

const { values } = parseArgs({
  options: {
    shifts: { type: 'string', default: '200000' },
    institutions: { type: 'string', default: '5' },
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '16' },
    keep: { type: 'boolean', default: false },
    /** Write a V8 CPU profile of the server process into this folder. */
    profile: { type: 'string' },
  },
});
const SHIFTS = Number(values.shifts);
const INSTITUTIONS = Number(values.institutions);
const SECONDS = Number(values.seconds);
const CONNECTIONS = Number(values.connections);
const here = new URL('.', import.meta.url).pathname;

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const mb = (bytes: number) => `${fmt(bytes / 1024 / 1024)} MB`;
const results: Array<[string, string, string]> = [];
const report = (name: string, value: string, target = '') => {
  results.push([name, value, target]);
  console.log(`  ${name}: ${value}${target ? `   [${target}]` : ''}`);
};
const verdict = (ok: boolean, text: string) => `${ok ? 'PASS' : 'FAIL'} target ${text}`;

const dir = mkdtempSync(join(tmpdir(), 'vm-bench-'));
console.log(`benchmark: ${fmt(SHIFTS)} shifts, ${INSTITUTIONS} institutions, DATA_DIR ${dir}`);

// 1. Generate and import.
const data = generate(SHIFTS, INSTITUTIONS);
const file = join(dir, 'bench.ndjson');
const text = data.lines.join('\n') + '\n';
writeFileSync(file, text);
{
  const store = openEventStore({ DATA_DIR: dir, EVENTSTORE_URL: undefined });
  const t0 = performance.now();
  const { appended } = await importEvents(store, file, text);
  const seconds = (performance.now() - t0) / 1000;
  await store.close();
  const rate = appended / seconds;
  report('import', `${fmt(appended)} events in ${fmt(seconds, 2)} s = ${fmt(rate)} events/s`, verdict(rate >= 50_000, '≥ 50,000 events/s'));
}

// 2. Replay the log into the read model (what `vm-api rebuild` does).
{
  const runtime = openRuntime({ DATA_DIR: dir, EVENTSTORE_URL: undefined });
  const t0 = performance.now();
  await runtime.disk.clear();
  await runtime.projector.load();
  await runtime.projector.catchUp();
  const seconds = (performance.now() - t0) / 1000;
  const { eventsApplied } = runtime.projector.status();
  await runtime.close();
  report('replay (rebuild)', `${fmt(eventsApplied)} events in ${fmt(seconds, 2)} s = ${fmt(eventsApplied / seconds)} events/s`);
}

// 3. Start the server from LMDB in its own process.
const profiling = values.profile ? ['--cpu-prof', `--cpu-prof-dir=${values.profile}`] : [];
const server = spawn(process.execPath, ['--expose-gc', '--max-old-space-size=4096', ...profiling, join(here, 'server.js'), dir], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
// Never leave the server behind, whatever ends this run.
process.on('exit', () => server.kill('SIGKILL'));
const ready = await new Promise<{ port: number; startupMs: number; rss: number; eventsApplied: number }>((resolve, reject) => {
  const rl = createInterface({ input: server.stdout });
  rl.once('line', (line) => resolve(JSON.parse(line)));
  server.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
});
const base = `http://127.0.0.1:${ready.port}`;
report('start-up from LMDB', `${fmt(ready.startupMs)} ms (${ready.eventsApplied} events replayed)`, verdict(ready.startupMs <= 3000, '≤ 3,000 ms'));
report('resident memory after start-up', mb(ready.rss));

// 4. The search mix.
function mix(): Array<{ path: string; key: string }> {
  const out: Array<{ path: string; key: string }> = [];
  let seed = 7;
  const next = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  const day = (offset: number) => new Date(Date.UTC(2026, 1, 1) + offset * 86_400_000).toISOString().slice(0, 10);
  for (let i = 0; i < 120; i++) {
    const inst = next() < 0.5 ? 0 : 1 + Math.floor(next() * (INSTITUTIONS - 1 || 1)) % INSTITUTIONS;
    const key = data.keys[inst]!;
    const sample = data.samples[inst]!;
    const d = Math.floor(next() * 330);
    const spots = 1 + Math.floor(next() * 15);
    const limit = next() < 0.5 ? 10 : 100;
    // Deep pages: anywhere up to the last page of this institution.
    const deepPage = (size: number) => 1 + Math.floor(next() * Math.max(1, Math.floor(data.counts[inst]! / size)));
    const queries = [
      `/api/shifts/search/?shift_date.gte=${day(d)}&shift_date.lt=${day(d + 7)}&limit=${limit}`,
      `/api/shifts/search/?date=${day(d)}&ordering=-spots&limit=${limit}`,
      `/api/shifts/search/?spots.gte=${spots}&spots.lte=${spots + 2}&ordering=spots&limit=${limit}`,
      `/api/shifts/search/?ordering=-shift_end_at&limit=${limit}`,
      `/api/shifts/search/?ordering=created_at&page=${deepPage(limit)}&limit=${limit}`,
      `/api/shifts/?page=${deepPage(10)}&limit=10`,
      `/api/shifts/search/?start_time.gte=09:00&start_time.lt=09:30&shift_date.gte=${day(d)}&shift_date.lt=${day(d + 30)}&limit=${limit}`,
      `/api/shifts/search/?shift_start_at.gte=${day(d)}T06:00:00Z&shift_start_at.lt=${day(d + 1)}T06:00:00Z&opportunity_id=${sample.opportunity}&limit=${limit}`,
      `/api/shifts/search/?created_date.gte=2026-01-01&spots=${spots}&limit=${limit}&page=2`,
    ];
    out.push({ path: queries[i % queries.length]!, key });
  }
  return out;
}
const requests = mix();
const sizes: number[] = [];
let slowest = { ms: 0, path: '' };
// Each query alone, warm: the median of four timed runs after a first one.
for (const { path, key } of requests) {
  const times: number[] = [];
  for (let rep = 0; rep < 5; rep++) {
    const t0 = performance.now();
    const res = await fetch(base + path, { headers: { 'api-key': key } });
    const body = await res.text();
    const ms = performance.now() - t0;
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${body}`);
    if (rep === 0) sizes.push(Buffer.byteLength(body));
    else times.push(ms);
  }
  times.sort((a, b) => a - b);
  const median = (times[1]! + times[2]!) / 2;
  if (median > slowest.ms) slowest = { ms: median, path };
}
const meanSize = sizes.reduce((a, b) => a + b, 0) / sizes.length;
report('search mix', `${requests.length} distinct queries, mean body ${fmt(meanSize)} bytes`);
report('slowest single query (alone, warm, median of 4, client included)', `${fmt(slowest.ms, 1)} ms  ${slowest.path}`);

interface Load {
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  errors: number;
  non2xx: number;
}
async function load(paths: string[], headers: Record<string, string>[], seconds: number): Promise<Load> {
  const job = JSON.stringify({ url: base, paths, headers, connections: CONNECTIONS, seconds });
  const child = spawn(process.execPath, [join(here, 'load.js'), job], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (c) => (out += c));
  await new Promise((resolve) => child.once('exit', resolve));
  return JSON.parse(out) as Load;
}
const mixPaths = requests.map((r) => r.path);
const mixHeaders = requests.map((r) => ({ 'api-key': r.key }));
const constPaths = sizes.map((s) => `/bench/constant?bytes=${s}`);
const noHeaders = sizes.map(() => ({}));

await load(mixPaths, mixHeaders, 2); // warm-up
await load(constPaths, noHeaders, 2);
const search = await load(mixPaths, mixHeaders, SECONDS);
const constant = await load(constPaths, noHeaders, SECONDS);
report('constant route (same bytes)', `${fmt(constant.rps)} req/s, p50 ${constant.p50} ms, p99 ${constant.p99} ms`);
report('search mix', `${fmt(search.rps)} req/s, p50 ${search.p50} ms, p99 ${search.p99} ms (errors ${search.errors}, non-2xx ${search.non2xx})`);
const share = search.rps / constant.rps;
report('search mix / constant route', `${fmt(share * 100, 1)} %`, verdict(share >= 0.5, '≥ 50 %'));

server.kill('SIGTERM');
await new Promise((resolve) => server.once('exit', resolve));
if (!values.keep) rmSync(dir, { recursive: true, force: true });
console.log('\nsummary');
for (const [name, value, target] of results) console.log(`| ${name} | ${value} | ${target} |`);
