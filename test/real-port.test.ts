/**
 * The server on a real port, where response bodies are carved from
 * recycled memory (src/http/response-buffers.ts) — inject never takes that
 * path. Many concurrent requests of all sizes must each get exactly the
 * body the same request gets alone (this catches a wrong length or offset
 * in the assembly). Whether a slab is reused too early cannot be provoked
 * from here: on loopback the kernel takes whole bodies at once, so a
 * buffer is never still needed after the write (a pool that releases at
 * once passed this test). The second test checks that rule directly.
 */
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import t from 'tap';
import { ResponseBuffers } from '../src/http/response-buffers.js';
import { DEMO_KEY, HARBOR_KEY, startApp } from './helpers.js';

t.test('concurrent responses on a socket are each intact', async (t) => {
  const app = await startApp({ fixtures: ['demo.ndjson'] });
  t.teardown(() => app.close());
  await app.server.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  const base = `http://127.0.0.1:${address.port}`;

  const requests: Array<{ url: string; key: string }> = [];
  for (let limit = 1; limit <= 100; limit += 9) {
    requests.push({ url: `/api/shifts/?limit=${limit}`, key: DEMO_KEY });
    requests.push({ url: `/api/shifts/search/?ordering=-spots&limit=${limit}&page=1`, key: DEMO_KEY });
    requests.push({ url: `/api/opportunities/?limit=${Math.min(limit, 10)}`, key: HARBOR_KEY });
  }
  requests.push({ url: '/api/shifts/search/?spots=999', key: DEMO_KEY });
  requests.push({ url: '/api/shifts/?page=99', key: DEMO_KEY });

  // What each request answers alone, through inject (which never pools).
  const expected = new Map<string, string>();
  for (const { url, key } of requests) {
    const res = await app.server.inject({ url, headers: { 'api-key': key } });
    expected.set(url + key, res.body);
  }

  // Ten rounds of every request at once, enough to cycle through the slabs.
  let checked = 0;
  for (let round = 0; round < 10; round++) {
    const bodies = await Promise.all(
      requests.map(async ({ url, key }) => {
        const res = await fetch(base + url, { headers: { 'api-key': key } });
        return { url, key, text: await res.text() };
      }),
    );
    for (const { url, key, text } of bodies) {
      if (text !== expected.get(url + key)) t.fail(`${url}: body differs from the same request alone`);
      else checked++;
    }
  }
  t.equal(checked, requests.length * 10, `${checked} concurrent bodies identical to their single answers`);
});

t.test('a slab is reused only once every response written from it has closed', async (t) => {
  const buffers = new ResponseBuffers();
  const response = () => Object.assign(new EventEmitter(), { socket: new Socket() }) as unknown as ServerResponse;
  const overlaps = (a: Buffer, b: Buffer) =>
    a.buffer === b.buffer && a.byteOffset < b.byteOffset + b.length && b.byteOffset < a.byteOffset + a.length;

  // Three slabs' worth of 100 kB bodies, none closed yet: no two may share memory.
  const open = Array.from({ length: 30 }, () => {
    const res = response();
    return { res, body: buffers.take(100_000, res) };
  });
  let shared = 0;
  for (let i = 0; i < open.length; i++) for (let j = i + 1; j < open.length; j++) if (overlaps(open[i]!.body, open[j]!.body)) shared++;
  t.equal(shared, 0, 'bodies of open responses never overlap');

  // Close all but one response of the first slab: that slab stays out of use.
  const [held, ...rest] = open;
  for (const { res } of rest) res.emit('close');
  const later = Array.from({ length: 30 }, () => buffers.take(100_000, response()));
  t.notOk(
    later.some((b) => overlaps(b, held!.body)),
    'memory of a response still open is not handed out again',
  );
  t.ok(
    later.some((b) => rest.some(({ body }) => overlaps(b, body))),
    'memory of closed responses is reused',
  );

  const big = buffers.take(600_000, response());
  t.equal(big.length, 600_000, 'a large body gets a buffer of its own');
  const injected = buffers.take(10, Object.assign(new EventEmitter(), { socket: null }) as unknown as ServerResponse);
  t.notOk(open.some(({ body }) => body.buffer === injected.buffer), 'a response without a real socket is not pooled');
});
