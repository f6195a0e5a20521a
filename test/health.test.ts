/**
 * /healthz: the projection's state, its position, the log's head and the
 * lag between them — on the embedded log, and on EventStoreDB (the stand-in)
 * across an outage, where the lag is also logged on resubscription.
 */
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import t from 'tap';
import { type DomainEvent, streamOf } from '../src/events/catalog.js';
import { BEHIND_AFTER_MS } from '../src/http/app.js';
import { createServer } from '../src/http/server.js';
import { openRuntime } from '../src/runtime.js';
import { EsdbStandIn } from './esdb-standin/server.js';
import { startApp, tempDir, TEST_NOW, until } from './helpers.js';

const RIVERSIDE = 'bf802b36-047d-4718-ad5b-ae9ed495b23f';

const categoryCreated = (title: string): DomainEvent => ({
  type: 'CategoryCreated',
  data: {
    institution_id: RIVERSIDE,
    occurred_at: '2026-10-01T10:00:00Z',
    category_id: randomUUID(),
    title,
    description: '',
  },
});

/** The head is asked for at most once a second: wait that long for a fresh answer. */
const headRefresh = () => new Promise((resolve) => setTimeout(resolve, 1100));

t.test('on the embedded log: level when caught up; head and lag in events while behind', async (t) => {
  const app = await startApp({ fixtures: ['demo.ndjson'] });
  t.teardown(() => app.close());

  const level = (await app.get('/healthz', null)).body;
  t.equal(level.status, 'ok');
  t.same(level.head, level.position, 'the head is the applied position');
  t.same(level.lag, { positions: '0', ms: 0 }, 'no lag when caught up');

  // Stop following the log, append three events: the read model is now three behind.
  await app.runtime.projector.stop();
  for (const title of ['A', 'B', 'C']) {
    const event = categoryCreated(title);
    await app.runtime.store.append(streamOf(event), [{ id: randomUUID(), type: event.type, data: event.data }]);
  }
  await headRefresh();
  const behind = (await app.get('/healthz', null)).body;
  t.same(behind.position, level.position, 'nothing applied meanwhile');
  t.equal(BigInt(behind.head.commit) - BigInt(level.head.commit), 3n, 'the head moved by the three events');
  t.equal(behind.lag.positions, '3', 'lag: three events');
  t.equal(behind.status, 'ok', 'behind for less than a second: ok (an append is applied within ms)');
  await new Promise((resolve) => setTimeout(resolve, BEHIND_AFTER_MS));
  const later = (await app.get('/healthz', null)).body;
  t.ok(later.lag.ms >= BEHIND_AFTER_MS, `the time behind grows (${later.lag.ms} ms)`);
  t.equal(later.status, 'catching_up', 'behind for a second or more: catching_up, not ok');

  await app.runtime.projector.catchUp();
  const caughtUp = (await app.get('/healthz', null)).body;
  t.same(caughtUp.lag, { positions: '0', ms: 0 }, 'level again once the events are applied');
  t.equal(caughtUp.status, 'ok');
  t.same(caughtUp.position, behind.head);
});

t.test('level the moment the read model it loads is level: no time behind left over from before', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.remove);
  // The demo's read model, written as a server left it.
  await (await startApp({ fixtures: ['demo.ndjson'], dir: tmp.dir })).close();
  const runtime = openRuntime({ DATA_DIR: tmp.dir, EVENTSTORE_URL: undefined }, pino({ level: 'silent' }), { clock: () => TEST_NOW });
  t.teardown(() => runtime.close());
  const before = await runtime.projector.lag();
  t.ok(before.positions > 0n, `behind before it loads (${before.positions} events)`);
  await new Promise((resolve) => setTimeout(resolve, 20));
  await runtime.projector.load();
  // (Within the second the head is not asked for again: the lag is the last head against the position loaded.)
  t.same(await runtime.projector.lag(), { head: before.head, positions: 0n, ms: 0 }, 'loaded, level: 0 ms behind');
});

t.test('on EventStoreDB: reconnecting during an outage, lag logged on resubscription, level again after', async (t) => {
  const server = await EsdbStandIn.start();
  const temp = tempDir();
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const log = pino({ level: 'info' }, sink);
  const runtime = openRuntime({ DATA_DIR: temp.dir, EVENTSTORE_URL: server.connectionString }, log, { clock: () => TEST_NOW });
  await runtime.projector.start();
  const http = await createServer(runtime, pino({ level: 'silent' }), { publicBaseUrl: 'http://vm.test' });
  t.teardown(async () => {
    await http.close();
    await runtime.close();
    await server.stop();
    temp.remove();
  });
  const health = async () => (await http.inject({ method: 'GET', url: '/healthz' })).json();

  const ours = (title: string) => {
    const event = categoryCreated(title);
    server.appendDirect(streamOf(event), [{ id: randomUUID(), type: event.type, data: event.data }]);
  };
  ours('before');
  const first = await until(async () => {
    const h = await health();
    return h.events_applied === 1 ? h : undefined;
  });
  t.equal(first.status, 'ok');

  await server.pause();
  const down = await until(async () => {
    const h = await health();
    return h.status === 'reconnecting' ? h : undefined;
  });
  t.ok(down.reconnects >= 1, `reconnecting is shown (${down.reconnects} reconnect attempts)`);
  t.ok(down.last_error, `with the last error: ${down.last_error}`);

  // Another client appends while this replica cannot reach the server.
  for (let i = 0; i < 4; i++) ours(`during ${i}`);
  await server.resume();
  const resubscribed = await until(() => lines.find((l) => l.msg === 'projection resubscribed; catching up from the checkpoint to the head'), 10_000);
  t.equal(resubscribed.position, first.position.commit, 'the log line names the checkpoint it resumes from');
  t.ok(BigInt(resubscribed.lag as string) > 0n, `and the lag to the head it found (${resubscribed.lag} positions)`);
  t.equal(resubscribed.head, server.events.at(-1)!.commit.toString(), 'the head is the last event in the log');

  await headRefresh();
  const after = await until(async () => {
    const h = await health();
    return h.status === 'ok' && h.events_applied === 5 ? h : undefined;
  }, 10_000);
  t.same(after.lag, { positions: '0', ms: 0 }, 'level again after the outage');
  t.equal(after.head.commit, server.events.at(-1)!.commit.toString());
});
