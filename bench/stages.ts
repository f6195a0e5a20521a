/**
 * npm run build && node dist/bench/stages.js <DATA_DIR> [--shifts 1000000 --institutions 10 --rounds 200]
 *
 * Where the search mix's time goes inside the server, stage by stage, with
 * no HTTP in between: over a DATA_DIR kept by `npm run bench -- --keep`
 * (same --shifts and --institutions), the read model is loaded as a
 * start-up loads it, then each request of the mix is parsed by its query
 * schema, searched, its page's JSON fragments looked up (made on the first
 * round) and its envelope assembled, each stage timed. Prints the mean per
 * request of each stage, overall and by query shape. What it leaves out
 * (routing, the API-KEY hook, headers, the socket) is what the constant
 * route of the benchmark pays as well.
 */
import { parseArgs } from 'node:util';
import type { FastifyRequest } from 'fastify';
import type { Kind, Records } from '../projections/records.js';
import { sha256 } from '../src/http/auth.js';
import { envelope, offsetOf } from '../src/http/pagination.js';
import { pageFragments } from '../src/http/routes/read.js';
import { search } from '../src/query/engine.js';
import type { ResourceDef } from '../src/query/resource.js';
import { searchSchema } from '../src/query/schema.js';
import { resources } from '../src/resources/index.js';
import { openRuntime } from '../src/runtime.js';
import { generate } from './generate.js';
import { mixRequests } from './mix.js';

const { values, positionals } = parseArgs({
  options: {
    shifts: { type: 'string', default: '1000000' },
    institutions: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '200' },
  },
  allowPositionals: true,
});
const dir = positionals[0];
if (!dir) throw new Error('usage: stages.js <DATA_DIR kept by npm run bench -- --keep>');
const ROUNDS = Number(values.rounds);

const data = generate(Number(values.shifts), Number(values.institutions));
data.lines.length = 0;
const runtime = openRuntime({ DATA_DIR: dir, EVENTSTORE_URL: undefined });
await runtime.projector.load();
const { model } = runtime;
const institutionOf = (key: string) => model.apiKey(sha256(key))!.institution_id;

type AnyDef = ResourceDef<Kind>;
const byPath = new Map<string, { def: AnyDef; schema: ReturnType<typeof searchSchema<Kind, Records[Kind]>> }>();
for (const def of Object.values(resources) as AnyDef[]) byPath.set(def.path, { def, schema: searchSchema(def) });
const listCount = (path: string) =>
  data.keys.map((key) => {
    const { def } = byPath.get(path)!;
    return search(model.table(def.kind, institutionOf(key)), { filters: [], ordering: def.defaultOrdering }, 0, 1, model).count;
  });
const counts = { shifts: listCount('shifts'), reservations: listCount('reservations'), profiles: listCount('profiles') };

// Lists and searches only (a retrieve is one lookup and one fragment).
const requests = mixRequests(data, counts)
  .map((request) => {
    const url = new URL(request.path, 'http://bench');
    const [, , path, second] = url.pathname.split('/');
    return { ...request, url, entry: byPath.get(path!)!, list: second === '' || second === 'search', institution: institutionOf(request.key) };
  })
  .filter((r) => r.list);

const stages = ['parse', 'search', 'fragments', 'envelope'] as const;
type Times = Record<(typeof stages)[number], number>;
const zero = (): Times => ({ parse: 0, search: 0, fragments: 0, envelope: 0 });
const total = zero();
const byShape = new Map<number, { n: number; times: Times; example: string }>();
const slab = Buffer.allocUnsafeSlow(1 << 22);
let used = 0;
const allocate = (n: number) => {
  if (used + n > slab.length) used = 0;
  used += n;
  return slab.subarray(used - n, used);
};

for (let round = -10; round < ROUNDS; round++) {
  for (const { url, entry, institution, shape, path } of requests) {
    const { def, schema } = entry;
    const t0 = performance.now();
    const query = schema.parse(Object.fromEntries(url.searchParams));
    const t1 = performance.now();
    const table = model.table(def.kind, institution);
    const { count, rows } = search(table, query, offsetOf(query), query.limit, model, def.groups);
    const t2 = performance.now();
    const fragments = table ? pageFragments(def, model, table, rows, institution) : [];
    const t3 = performance.now();
    const request = { url: url.pathname + url.search, protocol: 'http', host: 'bench' } as FastifyRequest;
    envelope(request, undefined, query, count, fragments, allocate);
    const t4 = performance.now();
    if (round < 0) continue; // warm-up (and the fragments made)
    const times: Times = { parse: t1 - t0, search: t2 - t1, fragments: t3 - t2, envelope: t4 - t3 };
    const entryOf = byShape.get(shape) ?? { n: 0, times: zero(), example: path };
    entryOf.n++;
    for (const stage of stages) {
      total[stage] += times[stage];
      entryOf.times[stage] += times[stage];
    }
    byShape.set(shape, entryOf);
  }
}
await runtime.close();

const us = (ms: number, n: number) => `${((ms / n) * 1000).toFixed(1)} µs`;
const n = ROUNDS * requests.length;
console.log(`stages of the search mix, mean per request over ${requests.length} lists and searches × ${ROUNDS} rounds:`);
console.log(`  ${stages.map((s) => `${s} ${us(total[s], n)}`).join(', ')}; all ${us(stages.reduce((a, s) => a + total[s], 0), n)}`);
for (const [shape, { n: count, times, example }] of [...byShape].sort((a, b) => a[0] - b[0])) {
  console.log(`  shape ${shape}: ${stages.map((s) => `${s} ${us(times[s], count)}`).join(', ')}  e.g. ${example}`);
}
