/**
 * Requests refused before any route runs, over a real port: each answers
 * `{"detail": "…"}` JSON with its status — a malformed percent-encoding in
 * the path or query, headers over the limit (431), a URL over the limit
 * (414), an unparsable request or unknown method (400), a request that
 * takes too long (408), a body of another type (415) or too large (413) —
 * and where the server closes the connection it says `Connection: close`
 * first, so a keep-alive client loses no request.
 */
import { connect } from 'node:net';
import t from 'tap';
import { MAX_URL_LENGTH } from '../src/http/refusals.js';
import { DEMO_KEY, startApp } from './helpers.js';

/** Send raw bytes on a new socket; everything the server answers, until it closes or `ms` pass. */
function raw(port: number, request: string, ms = 3000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk) => (answer += chunk));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
    socket.setTimeout(ms, () => {
      socket.destroy();
      resolve(answer);
    });
    socket.write(request, 'latin1');
  });
}

interface Parsed {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}
function parse(answer: string): Parsed {
  const [head, ...rest] = answer.split('\r\n\r\n');
  const [statusLine, ...lines] = head!.split('\r\n');
  const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  return { status: Number(statusLine!.split(' ')[1]), headers, body: JSON.parse(rest.join('\r\n')) };
}

t.test('every refusal before routing is a {detail} answer, with Connection: close when the socket closes', async (t) => {
  const app = await startApp({ fixtures: ['demo.ndjson'], requestTimeoutMs: 500 });
  t.teardown(() => app.close());
  await app.server.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.server.address() as { port: number };
  const get = (path: string, headers = '') => raw(port, `GET ${path} HTTP/1.1\r\nHost: x\r\nAPI-KEY: ${DEMO_KEY}\r\n${headers}\r\n`);

  const cases: Array<[string, string, number, RegExp, boolean]> = [
    ['a malformed percent-encoding in the path', 'GET /api/shifts/%E0%A4%A/ HTTP/1.1\r\nHost: x\r\n\r\n', 400, /malformed percent-encoding/, false],
    ['headers over 16 KB', `GET /api/shifts/ HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, /too large/, true],
    ['an unknown method', 'FROB /api/shifts/ HTTP/1.1\r\nHost: x\r\n\r\n', 400, /Unknown HTTP method|could not be parsed/, true],
    ['not HTTP at all', '\u0000\u0001\u0002 garbage\r\n\r\n', 400, /Unknown HTTP method|could not be parsed/, true],
  ];
  for (const [name, request, status, detail, closes] of cases) {
    const answer = parse(await raw(port, request));
    t.equal(answer.status, status, `${name}: ${status}`);
    t.match(answer.body, { detail }, `${name}: {detail}`);
    t.equal(Object.keys(answer.body as object).length, 1, `${name}: only detail`);
    if (closes) t.equal(answer.headers.connection, 'close', `${name}: Connection: close before the socket closes`);
  }

  const long = parse(await get(`/api/shifts/?title=${'a'.repeat(MAX_URL_LENGTH)}`));
  t.equal(long.status, 414);
  t.match(long.body, { detail: /URL is too long/ });

  const badQuery = parse(await get('/api/shifts/search/?title=%ZZ%E0'));
  t.ok(badQuery.status < 500, `a malformed percent-encoding in the query: ${badQuery.status}`);
  t.ok(typeof (badQuery.body as { count?: number }).count === 'number' || typeof (badQuery.body as { detail?: string }).detail === 'string');

  const slow = parse(await raw(port, `GET /api/shifts/ HTTP/1.1\r\nHost: x\r\nAPI-KEY: ${DEMO_KEY}\r\n`, 3000));
  t.equal(slow.status, 408, 'headers that never end: 408 after the request timeout');
  t.match(slow.body, { detail: /took too long/ });
  t.equal(slow.headers.connection, 'close');

  const typed = await fetch(`http://127.0.0.1:${port}/api/sites/bulk-create/`, {
    method: 'POST',
    headers: { 'api-key': DEMO_KEY, 'content-type': 'text/plain' },
    body: 'sites',
  });
  t.equal(typed.status, 415);
  t.match(await typed.json(), { detail: /Unsupported Media Type/ });
  const big = await fetch(`http://127.0.0.1:${port}/api/sites/bulk-create/`, {
    method: 'POST',
    headers: { 'api-key': DEMO_KEY, 'content-type': 'application/json' },
    body: JSON.stringify({ sites: [{ title: 'x'.repeat(2 * 1024 * 1024) }] }),
  });
  t.equal(big.status, 413);
  t.same(await big.json(), { detail: 'Request body is too large.' });
});

t.test('a keep-alive client loses no request to a socket the server closed', async (t) => {
  const app = await startApp({ fixtures: ['demo.ndjson'] });
  t.teardown(() => app.close());
  await app.server.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.server.address() as { port: number };
  const base = `http://127.0.0.1:${port}`;
  // Requests refused with 431 between ordinary ones, on the same keep-alive agent (fetch's).
  let answered = 0;
  for (let i = 0; i < 30; i++) {
    const big = i % 3 === 0;
    const res = await fetch(`${base}/api/shifts/?limit=1&i=${i}`, { headers: { 'api-key': DEMO_KEY, ...(big ? { 'x-big': 'b'.repeat(20_000) } : {}) } });
    t.equal(res.status, big ? 431 : 200, `request ${i}`);
    await res.arrayBuffer();
    answered++;
  }
  t.equal(answered, 30, 'every request answered');
});
