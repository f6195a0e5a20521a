/**
 * Hostile input over a real port with keep-alive (fast-check, seeded): random
 * and adversarial query strings for every endpoint — unknown, repeated,
 * empty, huge, unicode, control characters, malformed percent-encoding,
 * injection-looking values, extreme numbers, dates and times, bad UUIDs —
 * random and wrong keys, random bodies, content types and Idempotency-Keys
 * for the POSTs, and raw Latin-1 bytes on a socket. Never a 5xx, a 4xx is
 * always `{"detail": "…"}` alone, every request is answered, and nothing
 * refused changes the read model (a fixed set of answers byte-identical
 * before and after).
 */
import { connect } from 'node:net';
import fc from 'fast-check';
import t from 'tap';
import type { ParamDef } from '../src/query/resource.js';
import { keysOf } from '../src/query/schema.js';
import { resources } from '../src/resources/index.js';
import { DEMO_KEY, HARBOR_KEY, startApp } from './helpers.js';

const endpoints = Object.values(resources).flatMap((def) => [
  { path: `/api/${def.path}/`, def },
  ...(def.endpoints.search ? [{ path: `/api/${def.path}/search/`, def }] : []),
]);
/** Every GET path that takes a query string: the lists and searches, and the change feed. */
const getPaths = [...endpoints.map((e) => e.path), '/api/changes/'];
const keyNames = [...new Set(Object.values(resources).flatMap((def) => (def.params as readonly ParamDef<unknown>[]).flatMap((p) => keysOf(p).map((k) => k.key))))];

const adversarial = fc.oneof(
  fc.constantFrom(
    '', ' ', '%', '%Z', '%E0%A4', '%00', '%ff%fe', '..%2F..%2Fetc%2Fpasswd', "' OR 1=1 --", '"; DROP TABLE shifts; --', '<script>alert(1)</script>',
    '{"$gt":""}', '__proto__', 'constructor', 'NaN', 'Infinity', '-0', '1e308', '99999999999999999999', '-1', '0', '1.5', '0x10',
    '2026-02-30', '0000-00-00', '9999-12-31', '2026-13-01', '2026-1-1', '24:00', '23:59:60', '12:00:00.1234567', 'T', 'Z',
    '2026-01-01T25:00:00Z', '2026-01-01T00:00:00+25:00', '00000000-0000-0000-0000-00000000000g', 'ffffffff-ffff-ffff-ffff-ffffffffffff',
    'true', 'TRUE', 'yes', '１２', '٣', '\u202e', 'é', '😀', '\t', '\r\n', 'a'.repeat(3000), '-shift_start_at', 'spots', '--spots',
    'MS4x', 'MS4', 'LTEuLTE', 'OTk5OTk5OTk5OTk5OTk5OTkuMQ', 'MS4xLjE', '_-_-',
  ),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.integer().map(String),
  fc.double().map(String),
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
  fc.uuid(),
);
/** A query-string value as a client might send it: encoded, or with raw escapes left in. */
const encoded = fc.tuple(adversarial, fc.boolean()).map(([v, raw]) => (raw ? v.replace(/[\s#&?]/g, (c) => encodeURIComponent(c)) : encodeURIComponent(v)));
const key = fc.oneof(fc.constantFrom(...keyNames, 'page', 'limit', 'ordering', 'format', 'after', '__proto__', 'page[]', 'a.b.c'), fc.string({ maxLength: 12 }).map(encodeURIComponent));
const query = fc.array(fc.tuple(key, encoded), { maxLength: 6 }).map((pairs) => pairs.map(([k, v]) => `${k}=${v}`).join('&'));
const getRequest = fc.record({
  path: fc.oneof(
    fc.constantFrom(...getPaths),
    fc.constantFrom(...endpoints.map((e) => e.path)).chain((p) => encoded.map((id) => `${p}${id}/`)),
    fc.constantFrom('/api/', '/api', '/api/shifts', '/api/nope/', '/healthz', '/api/shifts/search', '/api//shifts/'),
  ),
  query,
  key: fc.constantFrom<string | null>(DEMO_KEY, DEMO_KEY, HARBOR_KEY, null, '', 'vm_not_a_key', 'x'.repeat(500)),
});
const postRequest = fc.record({
  path: fc.constantFrom('/api/sites/bulk-create/', '/api/sites/assign/', '/api/sites/unassign/', '/api/shifts/', '/api/sites/'),
  body: fc.oneof(
    fc.json({ maxDepth: 3 }),
    fc.anything({ maxDepth: 3 }).map((v) => {
      try {
        return JSON.stringify(v) ?? 'null';
      } catch {
        return '{';
      }
    }),
    fc.constantFrom('', '{', 'null', '[]', '{"sites":[]}', '{"sites":[{"title":""}]}', '{"sites":"x"}', '{"site_ids":[],"user_ids":[]}', '{"__proto__":{"x":1}}'),
  ),
  contentType: fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', '', 'application/json; charset=latin1'),
  idempotency: fc.option(fc.oneof(fc.string({ maxLength: 20 }), fc.constant(''), fc.constant('k'.repeat(300))), { nil: undefined }),
  key: fc.constantFrom<string | null>(DEMO_KEY, null, 'vm_not_a_key'),
});

/** The answers that must not change: every list of every endpoint, with both keys. */
async function probes(base: string): Promise<string[]> {
  const out: string[] = [];
  for (const { path } of endpoints) {
    for (const key of [DEMO_KEY, HARBOR_KEY]) out.push(await (await fetch(`${base}${path}?limit=100`, { headers: { 'api-key': key } })).text());
  }
  return out;
}

t.test('hostile requests: never a 5xx, 4xx always {detail}, every request answered, the read model unchanged', async (t) => {
  const app = await startApp({ fixtures: ['demo.ndjson'] });
  t.teardown(() => app.close());
  await app.server.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.server.address() as { port: number };
  const base = `http://127.0.0.1:${port}`;
  const before = await probes(base);
  let answered = 0;
  let accepted = 0;
  const check = async (res: Response, what: string) => {
    const text = await res.text();
    answered++;
    if (res.status >= 500) throw new Error(`${what}: ${res.status} ${text}`);
    if (res.status >= 400) {
      const body = JSON.parse(text) as Record<string, unknown>;
      if (Object.keys(body).length !== 1 || typeof body.detail !== 'string') throw new Error(`${what}: ${res.status} ${text}`);
    }
  };
  await fc.assert(
    fc.asyncProperty(fc.oneof({ arbitrary: getRequest, weight: 3 }, { arbitrary: postRequest, weight: 1 }), async (request) => {
      if ('query' in request) {
        const url = `${base}${request.path}${request.query ? `?${request.query}` : ''}`;
        const res = await fetch(url, { headers: request.key === null ? {} : { 'api-key': request.key } });
        await check(res, `GET ${url}`);
      } else {
        const headers: Record<string, string> = { ...(request.contentType ? { 'content-type': request.contentType } : {}) };
        if (request.key !== null) headers['api-key'] = request.key;
        if (request.idempotency !== undefined) headers['idempotency-key'] = request.idempotency;
        const res = await fetch(`${base}${request.path}`, { method: 'POST', headers, body: request.body });
        if (res.status < 300) accepted++;
        await check(res, `POST ${request.path} ${request.body}`);
      }
    }),
    { seed: 20261125, numRuns: 2500 },
  );
  t.equal(answered, 2500, 'every request answered');

  // Raw bytes the URL and fetch would not carry: Latin-1, control characters, pipelined on one keep-alive socket.
  const rawPaths = ['/api/shifts/?title=caf\u00e9', '/api/shifts/?title=\u0001\u007f', '/api/shifts/search/?date=2026\u00a0-01-01', '/api/\u00ff/', '/api/shifts/?%=%'];
  const answers = await new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk) => (text += chunk));
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
    socket.setTimeout(2000, () => {
      socket.destroy();
      resolve(text);
    });
    socket.write(rawPaths.map((p) => `GET ${p} HTTP/1.1\r\nHost: x\r\nAPI-KEY: ${DEMO_KEY}\r\n\r\n`).join(''), 'latin1');
  });
  const statuses = [...answers.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));
  t.ok(statuses.length > 0 && statuses.every((s) => s < 500), `raw Latin-1 requests: ${statuses.join(', ')}`);

  if (accepted === 0) t.same(await probes(base), before, 'every list answers byte for byte as before');
  else t.fail(`${accepted} random POSTs were accepted: the comparison would not be of refused requests only`);
});
