/**
 * The EventStoreDB adapter against the event store contract: on the
 * protocol-level stand-in (test/esdb-standin/) always, and on a real
 * EventStoreDB when EVENTSTORE_URL is set (see README). "Another process"
 * is another client appending over its own connection.
 */
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { EsdbEventStore } from '../src/eventstore/esdb.js';
import { eventStoreContract } from './eventstore-contract.js';
import { EsdbStandIn } from './esdb-standin/server.js';

/** Each test gets its own stream prefix, so one server can host many tests. */
function harness(connectionString: () => string, cleanup: () => Promise<void>) {
  let prefix = '';
  let stores: EsdbEventStore[] = [];
  return {
    async open() {
      prefix = `t${randomUUID().slice(0, 8)}-`;
      const store = EsdbEventStore.open(connectionString(), { prefixes: [prefix], backoff: { initialMs: 20, maxMs: 200 } });
      stores.push(store);
      return prefixed(store, prefix);
    },
    async cleanup() {
      for (const s of stores) await s.close().catch(() => undefined);
      stores = [];
      await cleanup();
    },
    async appendElsewhere(stream: string, events: Parameters<EsdbEventStore['append']>[1]) {
      const other = EsdbEventStore.open(connectionString(), { prefixes: [prefix] });
      await other.append(prefix + stream, events);
      await other.close();
    },
  };
}

/** The contract names its own streams; here they live under the test's prefix (the adapter reads only its prefixes). */
function prefixed(store: EsdbEventStore, prefix: string): EsdbEventStore {
  const p = (stream: string) => prefix + stream;
  const strip = <T extends { stream: string }>(e: T): T => ({ ...e, stream: e.stream.slice(prefix.length) });
  return Object.assign(Object.create(store) as EsdbEventStore, {
    append: (stream: string, events: Parameters<EsdbEventStore['append']>[1], expected?: Parameters<EsdbEventStore['append']>[2]) =>
      store.append(p(stream), events, expected).catch((error: unknown) => {
        if (error instanceof Error && 'stream' in error) Object.assign(error, { stream: (error as { stream: string }).stream.slice(prefix.length) });
        throw error;
      }),
    appendMany: (appends: Parameters<EsdbEventStore['appendMany']>[0]) =>
      store.appendMany([...appends].map((a) => ({ ...a, stream: p(a.stream) }))),
    readStream: async (stream: string, fromRevision?: number, maxCount?: number) => (await store.readStream(p(stream), fromRevision, maxCount)).map(strip),
    readAll: async (...args: Parameters<EsdbEventStore['readAll']>) => (await store.readAll(...args)).map(strip),
    close: () => store.close(),
  });
}

t.test('on the stand-in', async (t) => {
  // A fresh server for every test: the contract starts from an empty log.
  let server: EsdbStandIn | undefined;
  const fresh = harness(
    () => server!.connectionString,
    async () => {
      await server?.stop();
      server = undefined;
    },
  );
  eventStoreContract(
    t,
    'eventstoredb stand-in',
    {
      ...fresh,
      async open() {
        server = await EsdbStandIn.start();
        return fresh.open();
      },
    },
    { atomicAppendMany: false, sharedLog: false },
  );
});

if (process.env.EVENTSTORE_URL) {
  const url = process.env.EVENTSTORE_URL;
  t.test('on EVENTSTORE_URL', async (t) => {
    eventStoreContract(t, 'eventstoredb', harness(() => url, async () => undefined), { atomicAppendMany: false, sharedLog: true });
  });
}
