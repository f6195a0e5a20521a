/**
 * The envelope's page links (src/http/pagination.ts): the request's URL
 * with every pair kept as sent but page and limit (however their names are
 * spelled: `%70age`, `li+mit` is not `limit`), then the new page and limit;
 * valid JSON whatever the URL holds. Checked against a plain model on
 * random URLs, and around results.
 */
import fc from 'fast-check';
import type { FastifyRequest } from 'fastify';
import t from 'tap';
import { envelope } from '../src/http/pagination.js';

const request = (url: string) => ({ url, protocol: 'http', host: 'vm.test' }) as FastifyRequest;
const allocate = (n: number) => Buffer.alloc(n);
const body = (url: string, page: number, count: number, runs: Buffer[] = []) =>
  JSON.parse(envelope(request(url), undefined, { page, limit: 10 }, count, runs, allocate).toString('utf8')) as {
    count: number;
    next: string | null;
    previous: string | null;
    results: unknown[];
  };

/** The model: split on `&`, decode each name as a query string does, drop page and limit. */
function expectedLink(url: string, page: number): string {
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  const pairs = q === -1 ? [] : url.slice(q + 1).split('&').filter((pair) => pair !== '');
  const name = (pair: string) => {
    const raw = pair.includes('=') ? pair.slice(0, pair.indexOf('=')) : pair;
    try {
      return decodeURIComponent(raw.replaceAll('+', ' '));
    } catch {
      return raw;
    }
  };
  const kept = pairs.filter((pair) => name(pair) !== 'page' && name(pair) !== 'limit');
  return `http://vm.test${path}?${kept.map((pair) => `${pair}&`).join('')}page=${page}&limit=10`;
}

t.test('page links keep every pair but page and limit, as sent', async (t) => {
  const piece = fc.constantFrom('page', 'limit', '%70age', 'li%6Dit', 'pa+ge', 'lim', 'pages', '=', '&', '&&', '%', '%zz', '+', '"', '\\', 'é', 'date', '2', 'x=1', '\u2028');
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 14 }), fc.boolean(), (pieces, withQuery) => {
      const url = `/api/shifts/search/${withQuery ? '?' : ''}${pieces.join('')}`;
      const { next, previous } = body(url, 2, 100);
      return next === expectedLink(url, 3) && previous === expectedLink(url, 1);
    }),
    { numRuns: 3000 },
  );
  t.equal(body('/api/shifts/?%70age=3&title=a+b&limit=5', 2, 100).next, 'http://vm.test/api/shifts/?title=a+b&page=3&limit=10');
});

t.test('results: the runs with their last comma made the closing bracket', async (t) => {
  t.same(body('/api/x/', 1, 0).results, [], 'no runs');
  t.same(body('/api/x/', 1, 3, [Buffer.from('{"a":1},{"a":2},'), Buffer.from('{"a":3},')]).results, [{ a: 1 }, { a: 2 }, { a: 3 }]);
  t.same(body('/api/x/?q=é', 1, 1, [Buffer.from('{"b":"é"},')]), { count: 1, next: null, previous: null, results: [{ b: 'é' }] });
});
