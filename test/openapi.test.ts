/**
 * The OpenAPI document at GET /api/openapi.json: a valid OpenAPI 3.1
 * document (a real validator); every route the app registers in it, with
 * operationId, summary, tag and the API-KEY scheme on every /api/ one; every
 * query parameter of every resource under its name as sent, with its type,
 * format and ordering enum; every answer of the snapshot requests valid
 * against its operation's response schema (ajv) — the JSON is written by
 * hand, so this is what keeps contract and bytes in step; and a client
 * generated from the document (openapi-typescript + openapi-fetch)
 * type-checks, refuses a parameter no endpoint takes, and calls the demo
 * server. The /docs page is served with its assets from the package.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { RouteOptions } from 'fastify';
import { pino } from 'pino';
import t from 'tap';
import type { ParamDef } from '../src/query/resource.js';
import { keysOf } from '../src/query/schema.js';
import { resources } from '../src/resources/index.js';
import { createServer } from '../src/http/server.js';
import { areas } from './snapshots/cases.js';
import { resolver } from './snapshots/resolve.js';
import { DEMO_KEY, HARBOR_KEY, ROOT, startApp } from './helpers.js';

const run = promisify(execFile);

interface Operation {
  operationId?: string;
  summary?: string;
  tags?: string[];
  security?: Array<Record<string, string[]>>;
  parameters?: Array<{ name: string; in: string; required?: boolean; schema: Record<string, unknown> }>;
  requestBody?: unknown;
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
}
interface Document {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> };
}

const app = await startApp({ fixtures: ['demo.ndjson'] });
t.teardown(() => app.close());
const served = await app.server.inject({ method: 'GET', url: '/api/openapi.json' });
const doc = served.json() as Document;

t.test('served without a key, as OpenAPI 3.1 that a validator accepts', async (t) => {
  t.equal(served.statusCode, 200);
  t.match(served.headers['content-type'], /^application\/json/);
  t.equal(doc.openapi, '3.1.0');
  const result = await new Validator().validate(structuredClone(doc) as never);
  t.ok(result.valid, 'valid OpenAPI 3.1', { errors: result.errors });
  t.same(doc.components.securitySchemes.apiKey, { type: 'apiKey', in: 'header', name: 'API-KEY' });
});

t.test('every route the app registers is an operation, with id, summary, tag and security', async (t) => {
  // The app's routes as registered (a second server over the same runtime, told of each).
  const routes: RouteOptions[] = [];
  const server = await createServer(app.runtime, pino({ level: 'silent' }), { onRoute: (route) => routes.push(route) });
  await server.close();
  const documented = new Set<string>();
  for (const route of routes) {
    if ((route.schema as { hide?: boolean } | undefined)?.hide) continue; // other methods (405), the docs page, the document itself
    for (const method of [route.method].flat()) {
      if (method === 'HEAD') continue;
      const path = route.url.replace(/:(\w+)/g, '{$1}');
      t.ok(doc.paths[path]?.[method.toLowerCase()], `${method} ${path} is in the document`);
      documented.add(`${method.toLowerCase()} ${path}`);
    }
  }
  const ids = new Set<string>();
  for (const [path, operations] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(operations)) {
      t.ok(documented.has(`${method} ${path}`), `${method} ${path} is a route`);
      t.ok(op.operationId && !ids.has(op.operationId), `${method} ${path}: a unique operationId (${op.operationId})`);
      ids.add(op.operationId!);
      t.ok(op.summary, `${op.operationId}: a summary`);
      t.equal(op.tags?.length, 1, `${op.operationId}: one tag`);
      if (path.startsWith('/api/')) {
        t.same(op.security, [{ apiKey: [] }], `${op.operationId}: needs the API-KEY`);
        const statuses = Object.keys(op.responses);
        // Every read route pages or retrieves (404 past the last page, or no such record) but the change feed, which has no pages.
        const reads = path === '/api/changes/' ? ['400', '401', '405', '429'] : ['400', '401', '404', '405', '429'];
        // Writes: a body too large or not JSON; an Idempotency-Key used with another body where the operation takes one.
        const writes = ['400', '401', '405', '413', ...(op.requestBody ? ['422'] : []), '429'];
        for (const status of method === 'get' ? reads : writes) {
          if (status === '400' && path.endsWith('{id}/')) continue; // a retrieve takes no parameter to get wrong
          t.ok(statuses.includes(status), `${op.operationId}: ${status} documented`);
          if (statuses.includes(status)) t.same(op.responses[status]!.content!['application/json']!.schema, { $ref: '#/components/schemas/Detail' });
        }
        t.ok(statuses.some((s) => s.startsWith('2')), `${op.operationId}: a 2xx answer`);
      } else t.notOk(op.security, `${op.operationId}: no key`);
    }
  }
  t.same(doc.components.schemas.Detail, { type: 'object', properties: { detail: { type: 'string' } }, required: ['detail'], additionalProperties: false });
});

t.test('every query parameter by its name as sent, with type, format and ordering enum', async (t) => {
  const FORMAT = { uuid: 'uuid', timestamp: 'date-time', date: 'date', time: 'time' } as Record<string, string>;
  for (const def of Object.values(resources)) {
    // Where all of a resource's parameters are taken: its search, or (sites) its list.
    const listed = `/api/${def.path}/${def.endpoints.search ? 'search/' : ''}`;
    if (!def.endpoints.search && !def.endpoints.filteredList) continue;
    const params = new Map(doc.paths[listed]!.get!.parameters!.filter((p) => p.in === 'query').map((p) => [p.name, p.schema]));
    for (const param of def.params as ReadonlyArray<ParamDef<unknown>>) {
      for (const { key } of keysOf(param)) {
        const schema = params.get(key);
        t.ok(schema, `${listed} ${key}`);
        if (!schema) continue;
        if (FORMAT[param.type]) t.equal(schema.format, FORMAT[param.type], `${key}: format ${FORMAT[param.type]}`);
        if (param.type === 'integer') t.ok(schema.type === 'integer' && typeof schema.minimum === 'number' && typeof schema.maximum === 'number', `${key}: an integer with bounds`);
        if (param.type === 'choice') t.same(schema.enum, param.choices, `${key}: its choices`);
        if (param.type === 'boolean') t.equal(schema.type, 'boolean');
      }
    }
    const orderings = Object.keys(def.orderings);
    if (orderings.length > 0) t.same(params.get('ordering')?.enum, orderings, `${listed} ordering enum`);
    t.same(params.get('limit'), { type: 'integer', minimum: 1, maximum: 100, default: 10 }, `${listed} limit`);
  }
  t.ok(doc.paths['/api/shifts/search/']!.get!.parameters!.some((p) => p.name === 'category.id'), 'a dotted name');
  t.ok(doc.paths['/api/shifts/search/']!.get!.parameters!.some((p) => p.name === 'spots.gte'), 'a range suffix');
});

t.test('every snapshot answer is valid against its operation\'s response schema', async (t) => {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema({ $id: 'openapi.json', components: doc.components } as never);
  const templates = Object.keys(doc.paths).map((path) => ({ path, pattern: new RegExp(`^${path.replace(/\{\w+\}/g, '[^/]+')}$`) }));
  const resolve = await resolver(app);
  const keys = { riverside: DEMO_KEY, harbor: HARBOR_KEY, none: null } as const;
  let checked = 0;
  const cases = Object.values(areas).flat();
  for (const c of cases) {
    const url = resolve(c.url);
    const res = await app.get(url, keys[c.as ?? 'riverside']);
    const path = templates.find((p) => p.pattern.test(url.split('?')[0]!))?.path;
    const response = path && doc.paths[path]!.get!.responses[String(res.status)];
    t.ok(response, `${c.name}: ${res.status} is documented for ${path}`);
    const schema = response && response.content?.['application/json']?.schema;
    if (!schema) continue;
    const validate = ajv.compile({ $ref: `openapi.json${(schema as { $ref: string }).$ref}` });
    t.ok(validate(res.body), `${c.name} (${url})`, { errors: validate.errors?.slice(0, 5) });
    checked++;
  }
  t.equal(checked, cases.length, `all ${checked} answers checked`);
});

t.test('a client generated from the document type-checks and calls the demo server', async (t) => {
  // Inside the project, so that the client finds openapi-fetch in node_modules.
  const dir = join(ROOT, 'test', '.generated-client');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'openapi.json'), served.body);
  await run(process.execPath, [join(ROOT, 'node_modules', 'openapi-typescript', 'bin', 'cli.js'), join(dir, 'openapi.json'), '-o', join(dir, 'api.ts')]);
  writeFileSync(
    join(dir, 'client.ts'),
    `import createClient from 'openapi-fetch';
import type { paths } from './api.js';

export async function calls(baseUrl: string, key: string) {
  // Lists answer JSON or CSV: this client takes the JSON.
  const client = createClient<paths, 'application/json'>({ baseUrl, headers: { 'API-KEY': key } });
  const week = await client.GET('/api/shifts/search/', { params: { query: { 'shift_date.gte': '2026-10-01', 'shift_date.lt': '2026-10-08', ordering: '-spots', limit: 100 } } });
  const first = week.data?.results[0];
  const one = first ? await client.GET('/api/shifts/{id}/', { params: { path: { id: first.id } } }) : undefined;
  const title: string | undefined = one?.data?.opportunity.category.title;
  const created = await client.POST('/api/sites/bulk-create/', { body: { sites: [{ title: 'Made by a generated client' }] } });
  const wrong = await client.GET('/api/shifts/search/', { params: { query: { ordering: 'spots', 'spots.gte': 5, page: 99 } } });
  // @ts-expect-error: no endpoint takes this parameter
  await client.GET('/api/shifts/search/', { params: { query: { colour: 'red' } } });
  // @ts-expect-error: not an ordering of shifts
  await client.GET('/api/shifts/search/', { params: { query: { ordering: 'title' } } });
  return { count: week.data?.count, spots: week.data?.results.map((s) => s.spots), title, created: created.data?.results[0]?.title, wrong: wrong.error?.detail };
}
`,
  );
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { strict: true, target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext', outDir: 'out', skipLibCheck: true }, include: ['api.ts', 'client.ts'] }),
  );
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  const tsc = await run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', dir]).catch((error: { stdout: string }) => error);
  t.equal(tsc.stdout, '', 'the generated client type-checks (and refuses what the document does not allow)');
  if (tsc.stdout) t.comment(tsc.stdout);

  const base = await app.server.listen({ port: 0, host: '127.0.0.1' });
  const { calls } = (await import(join(dir, 'out', 'client.js'))) as { calls: (base: string, key: string) => Promise<Record<string, unknown>> };
  const answers = await calls(base, DEMO_KEY);
  t.equal(answers.count, (await app.get('/api/shifts/search/?shift_date.gte=2026-10-01&shift_date.lt=2026-10-08')).body.count);
  const spots = answers.spots as number[];
  t.same(spots, [...spots].sort((a, b) => b - a), 'ordered by -spots');
  t.type(answers.title, 'string');
  t.equal(answers.created, 'Made by a generated client');
  t.equal(answers.wrong, 'Invalid page.');
});

t.test('/docs: the interactive reference, its assets served from the package', async (t) => {
  const page = await app.server.inject({ method: 'GET', url: '/docs/' });
  t.equal(page.statusCode, 200);
  t.match(page.headers['content-type'], /text\/html/);
  const assets = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
  t.ok(assets.length > 0, `${assets.length} assets`);
  for (const asset of assets) {
    t.notMatch(asset, /^(https?:)?\/\//, `${asset}: from this server`);
    const res = await app.server.inject({ method: 'GET', url: new URL(asset, 'http://vm.test/docs/').pathname });
    t.equal(res.statusCode, 200, `${asset} is served`);
  }
  const initializer = await app.server.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' });
  t.equal(initializer.statusCode, 200);
  const spec = await app.server.inject({ method: 'GET', url: '/docs/json' });
  t.same(spec.json(), doc, 'the document it shows is the one at /api/openapi.json');
  const policy = String(page.headers['content-security-policy']);
  t.match(policy, /default-src 'self'/, 'a content security policy');
  t.notMatch(policy, /upgrade-insecure-requests/, 'which does not send a browser to HTTPS for a page served over plain HTTP');
});
