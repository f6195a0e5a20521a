/**
 * Query strings read once (src/http/query-strings.ts): a repeated query
 * string is parsed and validated once, and answers exactly as the first
 * time; what failed validation fails again; the remembered objects are
 * frozen; the cache forgets its oldest strings past its capacity. Over the
 * real app: a mix of repeated, fresh and invalid queries on several routes
 * answers exactly as a server that remembers nothing.
 */
import fc from 'fast-check';
import { parse } from 'fast-querystring';
import t from 'tap';
import { QueryStringCache, rememberingQueryValidators } from '../src/http/query-strings.js';
import { startApp } from './helpers.js';

t.test('a repeated query string is parsed once, to a frozen object equal to a fresh parse', async (t) => {
  const cache = new QueryStringCache();
  const first = cache.parse('date=2026-09-01&limit=5&a=1&a=2');
  t.equal(cache.parse('date=2026-09-01&limit=5&a=1&a=2'), first, 'the same object');
  t.same({ ...first }, { ...parse('date=2026-09-01&limit=5&a=1&a=2') });
  t.ok(Object.isFrozen(first));
  t.ok(Object.isFrozen(first.a), 'a repeated key: its array is frozen too');
  t.same({ ...cache.parse('') }, {});
});

t.test('past its capacity the cache forgets its oldest strings; overlong strings are not kept', async (t) => {
  const cache = new QueryStringCache(2);
  const a = cache.parse('a=1');
  const b = cache.parse('b=1');
  t.equal(cache.parse('a=1'), a);
  cache.parse('c=1');
  t.not(cache.parse('a=1'), a, 'a (the oldest) was forgotten');
  t.not(cache.parse('b=1'), b, 'then b');
  const long = `x=${'y'.repeat(4096)}`;
  t.not(cache.parse(long), cache.parse(long));
  t.notOk(Object.isFrozen(cache.parse(long)), 'nor frozen: its validation is not remembered either');
  t.same({ ...cache.parse(long) }, { x: 'y'.repeat(4096) });
});

t.test('a query-string validator remembers successes by the parsed object, and nothing else', async (t) => {
  let calls = 0;
  const compile = rememberingQueryValidators<unknown>(() => (data: unknown) => {
    calls++;
    const q = data as Record<string, unknown>;
    return q.bad === undefined ? { value: { seen: { ...q }, list: [1] } } : { error: new Error('bad') };
  });
  const validate = compile({ schema: {}, method: 'GET', url: '/x', httpPart: 'querystring' }) as (d: unknown) => {
    value?: { seen: unknown; list: number[] };
    error?: Error;
  };
  const cache = new QueryStringCache();
  const good = cache.parse('a=1');
  const first = validate(good);
  t.equal(validate(good), first, 'remembered');
  t.equal(calls, 1);
  t.ok(Object.isFrozen(first.value) && Object.isFrozen(first.value!.list), 'the shared value is frozen, with its arrays');
  validate(parse('a=1'));
  t.equal(calls, 2, 'an object not from the cache (not frozen) is validated anew');
  const bad = cache.parse('bad=1');
  t.ok(validate(bad).error);
  t.ok(validate(bad).error);
  t.equal(calls, 4, 'a failure is not remembered');
  const body = compile({ schema: {}, method: 'POST', url: '/x', httpPart: 'body' }) as (d: unknown) => unknown;
  body(good);
  body(good);
  t.equal(calls, 6, 'other parts of a request are validated every time');
});

t.test('over the app, repeated, fresh and invalid query strings answer as the first time, on every route', async (t) => {
  const app = await startApp({ fixtures: ['demo.ndjson'] });
  t.teardown(() => app.close());
  const queries = [
    '/api/shifts/search/?limit=2',
    '/api/shifts/search/?limit=2&page=2',
    '/api/shifts/?limit=2',
    '/api/shifts/search/?spots.gte=2&ordering=-spots&limit=3',
    '/api/shifts/search/?limit=0',
    '/api/shifts/search/?date=nope',
    '/api/profiles/?limit=2',
    '/api/profiles/search/?limit=2',
    '/api/opportunities/search/?limit=2&ordering=nope',
    '/api/reservations/?limit=2&limit=3',
  ];
  const first = new Map<string, { status: number; text: string }>();
  for (const url of queries) {
    const { status, text } = await app.get(url);
    first.set(url, { status, text });
  }
  t.ok([...first.values()].some((r) => r.status === 400), 'some are refused');
  t.ok([...first.values()].some((r) => r.status === 200), 'some answer');
  await fc.assert(
    fc.asyncProperty(fc.array(fc.constantFrom(...queries), { minLength: 1, maxLength: 30 }), async (urls) => {
      for (const url of urls) {
        const { status, text } = await app.get(url);
        if (status !== first.get(url)!.status || text !== first.get(url)!.text) return false;
      }
      return true;
    }),
    { numRuns: 20 },
  );
});
