/**
 * The EventStoreDB adapter's subscription when the server drops it or goes
 * away: it resubscribes from the last applied position with backoff,
 * delivers every event once, and reports the failures meanwhile.
 */
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { EsdbEventStore } from '../src/eventstore/esdb.js';
import { type RecordedEvent, startOfLog, StoreUnavailableError } from '../src/eventstore/port.js';
import { EsdbStandIn } from './esdb-standin/server.js';
import { until } from './helpers.js';

const event = () => ({ id: randomUUID(), type: 'Thing', data: { n: Math.random() } });


t.test('dropped and refused subscriptions resume from the last position, each event once', async (t) => {
  const server = await EsdbStandIn.start();
  const store = EsdbEventStore.open(server.connectionString, { prefixes: ['thing-'], backoff: { initialMs: 20, maxMs: 200 } });
  t.teardown(async () => {
    await store.close();
    await server.stop();
  });
  const seen: RecordedEvent[] = [];
  const errors: unknown[] = [];
  let caughtUp = 0;
  const subscription = store.subscribe(startOfLog, {
    onEvents: async (events) => {
      seen.push(...events);
    },
    onCaughtUp: () => {
      caughtUp++;
    },
    onError: (error) => {
      errors.push(error);
    },
  });
  t.teardown(() => subscription.close());
  const expected: string[] = [];
  const append = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const e = event();
      await store.append(`thing-${randomUUID()}`, [e]);
      expected.push(e.id);
    }
  };
  // Another application's stream and a system event: filtered out server-side.
  await store.append(`other-${randomUUID()}`, [event()]);
  await append(3);
  await until(() => (seen.length === 3 ? true : undefined));

  server.dropSubscriptions('end');
  await append(2);
  await until(() => (seen.length === 5 ? true : undefined));
  t.ok(errors.length >= 1, 'a subscription ended by the server is reported');

  server.dropSubscriptions('error');
  await append(2);
  await until(() => (seen.length === 7 ? true : undefined));

  await server.pause();
  await t.rejects(store.append(`thing-${randomUUID()}`, [event()]), StoreUnavailableError, 'an append while the server is down is StoreUnavailableError');
  await new Promise((resolve) => setTimeout(resolve, 300));
  await server.resume();
  // The client reconnects on its own, after its channel's backoff: retry as a caller would.
  const started = Date.now();
  for (;;) {
    try {
      await append(1);
      break;
    } catch (error) {
      if (!(error instanceof StoreUnavailableError) || Date.now() - started > 5000) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  await append(1);
  await until(() => (seen.length === 9 ? true : undefined));

  t.same(seen.map((e) => e.id), expected, 'every event of ours, in order, once, across two drops and an outage');
  t.ok(caughtUp >= 3, `caught up again after each resubscription (${caughtUp} times)`);
  t.ok(errors.length >= 3, `${errors.length} failures reported while resubscribing`);
});
