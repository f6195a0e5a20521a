/**
 * npm run build && node dist/bench/one-query.js <DATA_DIR> <institution number> '<path and query>' [--times 20]
 *
 * One search of the random mix alone, timed again and again in process, with
 * the engine's plan: for looking into a slow query the bench printed (run
 * with --cpu-prof to see where its time goes).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Kind, Records } from '../projections/records.js';
import { sha256 } from '../src/http/auth.js';
import { offsetOf } from '../src/http/pagination.js';
import { search } from '../src/query/engine.js';
import type { ResourceDef } from '../src/query/resource.js';
import { searchSchema } from '../src/query/schema.js';
import { resources } from '../src/resources/index.js';
import { finishBackgroundWork } from '../src/readmodel/background.js';
import { openRuntime } from '../src/runtime.js';
import type { BenchData } from './generate.js';
import { planOf } from './report.js';

const { values, positionals } = parseArgs({ options: { times: { type: 'string', default: '20' } }, allowPositionals: true });
const [dir, institution, path] = positionals;
if (!dir || !institution || !path) throw new Error("usage: one-query.js <DATA_DIR> <institution number> '<path?query>'");
const data = JSON.parse(readFileSync(join(dir, 'bench-data.json'), 'utf8')) as BenchData;
const runtime = openRuntime({ DATA_DIR: dir, EVENTSTORE_URL: undefined });
await runtime.projector.load();
const { model } = runtime;
model.flush();
const url = new URL(path, 'http://bench');
const def = Object.values(resources).find((d) => d.path === url.pathname.split('/')[2]) as ResourceDef<Kind> | undefined;
if (!def) throw new Error(`no resource for ${url.pathname}`);
const query = searchSchema<Kind, Records[Kind]>(def).parse(Object.fromEntries(url.searchParams));
const table = model.table(def.kind, model.apiKey(sha256(data.keys[Number(institution)]!))!.institution_id);
const once = () => search(table, query, offsetOf(query), query.limit, model, def.groups);
once();
finishBackgroundWork(model);
for (let i = 0; i < Number(values.times); i++) {
  const t0 = performance.now();
  const result = once();
  console.log(`${((performance.now() - t0) * 1000).toFixed(0)} µs  ${result.count} matches  [${planOf(result)}]`);
}
await runtime.close();
