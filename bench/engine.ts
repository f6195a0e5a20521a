/**
 * npm run build && node dist/bench/engine.js <DATA_DIR> [--queries 12000 --seed <n> --repeat 3 --passes 0 --fragment-cache-mb 256 --rank-matrix-mb 256]
 *
 * The search engine alone on the random mix (random-mix.ts), with no HTTP:
 * over a DATA_DIR made by `npm run bench -- --prepare` (or kept by
 * `--keep`), the read model is loaded as a start-up loads it, each query
 * parsed by its endpoint's query schema, counted, given a page drawn up to
 * its last, and searched `--repeat` times (the median kept). Prints the
 * time per query by class (median, p99, max), the slowest queries, and the
 * mean — what a server pays for the engine on top of parsing, JSON and the
 * socket.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Kind, Records } from '../projections/records.js';
import { sha256 } from '../src/http/auth.js';
import type { FastifyRequest } from 'fastify';
import { envelope, offsetOf } from '../src/http/pagination.js';
import { pageFragments } from '../src/http/routes/read.js';
import { search } from '../src/query/engine.js';
import type { ResourceDef } from '../src/query/resource.js';
import { searchSchema } from '../src/query/schema.js';
import { resources } from '../src/resources/index.js';
import { fragmentArena } from '../src/readmodel/fragment-store.js';
import { finishBackgroundWork } from '../src/readmodel/background.js';
import { openRuntime } from '../src/runtime.js';
import { mulberry32 } from '../scripts/random.js';
import type { BenchData } from './generate.js';
import { randomQueries, withPage } from './random-mix.js';
import { byPlan, classTable, heaviest, planOf, slowest, type Timing } from './report.js';

const { values, positionals } = parseArgs({
  options: {
    queries: { type: 'string', default: '12000' },
    seed: { type: 'string' },
    repeat: { type: 'string', default: '3' },
    /** Passes over the whole mix afterwards, each query searched and its page's JSON taken (from the fragment cache or made), as rounds of the HTTP mix ask again. */
    passes: { type: 'string', default: '0' },
    /** The fragment cache's budget (FRAGMENT_CACHE_MB). */
    'fragment-cache-mb': { type: 'string' },
    /** The rank matrices' budget (RANK_MATRIX_MB). */
    'rank-matrix-mb': { type: 'string' },
  },
  allowPositionals: true,
});
const dir = positionals[0];
if (!dir) throw new Error('usage: engine.js <DATA_DIR made by npm run bench -- --prepare>');
const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
const REPEAT = Number(values.repeat);

const data = JSON.parse(readFileSync(join(dir, 'bench-data.json'), 'utf8')) as BenchData;
const cacheMb = values['fragment-cache-mb'];
const matrixMb = values['rank-matrix-mb'];
const runtime = openRuntime({
  DATA_DIR: dir,
  EVENTSTORE_URL: undefined,
  ...(cacheMb === undefined ? {} : { FRAGMENT_CACHE_MB: Number(cacheMb) }),
  ...(matrixMb === undefined ? {} : { RANK_MATRIX_MB: Number(matrixMb) }),
});
const loadStarted = performance.now();
await runtime.projector.load();
const { model } = runtime;
model.flush();
console.log(`read model loaded in ${Math.round(performance.now() - loadStarted)} ms; seed ${seed}`);

type AnyDef = ResourceDef<Kind>;
const byPath = new Map<string, { def: AnyDef; schema: ReturnType<typeof searchSchema<Kind, Records[Kind]>> }>();
for (const def of Object.values(resources) as AnyDef[]) byPath.set(def.path, { def, schema: searchSchema(def) });
const institutionOf = data.keys.map((key) => model.apiKey(sha256(key))!.institution_id);

const queries = randomQueries(data, Number(values.queries), seed);
const rand = mulberry32(seed ^ 0x5eed);
// Each query's page (drawn up to its last), searched once: what the server would have been asked before.
const prepared = queries.map((q) => {
  const url = new URL(q.path, 'http://bench');
  const { def, schema } = byPath.get(url.pathname.split('/')[2]!)!;
  const parsed = schema.safeParse(Object.fromEntries(url.searchParams));
  if (!parsed.success) throw new Error(`${q.path}: ${parsed.error.message}`);
  const table = model.table(def.kind, institutionOf[q.institution]!);
  const { count } = search(table, parsed.data, 0, 1, model, def.groups);
  const paged = withPage(q, count, rand);
  const query = schema.parse(Object.fromEntries(new URL(paged.path, 'http://bench').searchParams));
  search(table, query, offsetOf(query), query.limit, model, def.groups);
  return { def, schema, table, count, paged, query };
});
// What those searches wanted made in the background (rank matrices, zone maps), made now, with the rest of the background's work.
const building = performance.now();
finishBackgroundWork(model);
console.log(`background work finished in ${Math.round(performance.now() - building)} ms; rank matrices held: ${Math.round(model.rankBytes() / 2 ** 20)} MB`);

const timings: Timing[] = [];
// Besides the search: the other stages a server pays per request (parsing, the page's JSON, the envelope), in µs.
const stages = { parse: 0, 'fragments (first)': 0, 'fragments (again)': 0, envelope: 0 };
const slab = Buffer.allocUnsafeSlow(1 << 22);
const started = performance.now();
for (const { def, schema, table, count, paged, query } of prepared) {
  const url = new URL(paged.path, 'http://bench');
  const t0 = performance.now();
  schema.parse(Object.fromEntries(url.searchParams));
  const t1 = performance.now();
  const { rows } = search(table, query, offsetOf(query), query.limit, model, def.groups);
  const t2 = performance.now();
  pageFragments(def, model, table!, rows, table!.institution);
  const t3 = performance.now();
  const fragments = pageFragments(def, model, table!, rows, table!.institution);
  const t4 = performance.now();
  envelope({ url: url.pathname + url.search, protocol: 'http', host: 'bench' } as FastifyRequest, undefined, query, count, fragments, (n) => slab.subarray(0, n));
  const t5 = performance.now();
  stages.parse += t1 - t0;
  stages['fragments (first)'] += t3 - t2;
  stages['fragments (again)'] += t4 - t3;
  stages.envelope += t5 - t4;
  const runs: number[] = [];
  let plan: string | undefined;
  for (let r = 0; r < REPEAT; r++) {
    const t0 = performance.now();
    plan = planOf(search(table, query, offsetOf(query), query.limit, model, def.groups));
    runs.push(performance.now() - t0);
  }
  runs.sort((a, b) => a - b);
  timings.push({ ms: runs[runs.length >> 1]!, cls: paged.cls, path: paged.path, count, plan });
}
const wall = performance.now() - started;
for (let pass = 1; pass <= Number(values.passes); pass++) {
  let searching = 0;
  let paging = 0;
  for (const { def, table, query } of prepared) {
    const t0 = performance.now();
    const { rows } = search(table, query, offsetOf(query), query.limit, model, def.groups);
    const t1 = performance.now();
    pageFragments(def, model, table!, rows, table!.institution);
    searching += t1 - t0;
    paging += performance.now() - t1;
  }
  const perQuery = (ms: number) => ((1000 * ms) / prepared.length).toFixed(1);
  console.log(`pass ${pass} over the mix, a query: search ${perQuery(searching)} µs, page JSON ${perQuery(paging)} µs; fragment cache ${Math.round(fragmentArena.bytes / 2 ** 20)} MB; RSS ${Math.round(process.memoryUsage().rss / 2 ** 20)} MB`);
}
await runtime.close();

const total = timings.reduce((a, t) => a + t.ms, 0);
console.log(`${timings.length} queries (${new Set(timings.map((t) => t.path)).size} distinct), engine time mean ${(1000 * total / timings.length).toFixed(1)} µs; wall ${(wall / 1000).toFixed(1)} s`);
console.log(`other stages, mean per query: ${Object.entries(stages).map(([name, ms]) => `${name} ${((1000 * ms) / timings.length).toFixed(1)} µs`).join(', ')}`);
classTable(timings, 40);
heaviest(timings, 25);
byPlan(timings);
slowest(timings, 15);
