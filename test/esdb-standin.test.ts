/**
 * The EventStoreDB stand-in (test/esdb-standin/server.ts) driven by the
 * official client, @eventstore/db-client: what the EventStoreDB adapter's
 * tests rely on behaves as the client expects from an EventStoreDB 23.x.
 */
import { randomUUID } from 'node:crypto';
import t, { type Test } from 'tap';
import {
  ANY,
  BACKWARDS,
  END,
  EventStoreDBClient,
  eventTypeFilter,
  excludeSystemEvents,
  FORWARDS,
  jsonEvent,
  NO_STREAM,
  START,
  STREAM_EXISTS,
  StreamNotFoundError,
  streamNameFilter,
  UnavailableError,
  WrongExpectedVersionError,
  type Filter,
  type Position,
  type ResolvedEvent,
} from '@eventstore/db-client';
import { EsdbStandIn, type StandInOptions } from './esdb-standin/server.js';

/** A stand-in and a client, both closed when the test ends. */
async function setup(t: Test, options?: StandInOptions) {
  const server = await EsdbStandIn.start(options);
  const clients: EventStoreDBClient[] = [];
  const connect = () => {
    const client = EventStoreDBClient.connectionString(server.connectionString);
    clients.push(client);
    return client;
  };
  t.teardown(async () => {
    for (const c of clients) await c.dispose();
    await server.stop();
  });
  return { server, client: connect(), connect };
}

const event = (type: string, data: Record<string, unknown> = {}, id?: string) =>
  jsonEvent(id ? { type, data, id } : { type, data });

async function readAllOf(iterable: AsyncIterable<ResolvedEvent>): Promise<ResolvedEvent[]> {
  const out: ResolvedEvent[] = [];
  for await (const e of iterable) out.push(e);
  return out;
}

async function until(condition: () => boolean, what: string, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The error a promise rejects with (tap's rejects() matches patterns, not predicates or the client's error classes). */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

const isUnavailable = (error: unknown) =>
  error instanceof UnavailableError || (typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 14);

for (const batchAppend of [true, false]) {
  const mode = batchAppend ? 'BatchAppend' : 'Append';

  t.test(`appends with every expected revision kind (${mode})`, async (t) => {
    const { client, server } = await setup(t, { batchAppend });
    const stream = `shift-${randomUUID()}`;

    const first = await client.appendToStream(stream, [event('A', { n: 1 }), event('B', { n: 2 })], { expectedRevision: NO_STREAM });
    t.equal(first.success, true);
    t.equal(first.nextExpectedRevision, 1n);
    t.same(first.position, { commit: 200n, prepare: 200n }, 'positions are (index + 1) * 100');

    const byRevision = await client.appendToStream(stream, event('C'), { expectedRevision: 1n });
    t.equal(byRevision.nextExpectedRevision, 2n);
    const exists = await client.appendToStream(stream, event('D'), { expectedRevision: STREAM_EXISTS });
    t.equal(exists.nextExpectedRevision, 3n);
    const any = await client.appendToStream(stream, event('E'), { expectedRevision: ANY });
    t.equal(any.nextExpectedRevision, 4n);
    t.ok(any.position!.commit > exists.position!.commit, 'the global position grows');

    const wrong = await rejection(client.appendToStream(stream, event('X'), { expectedRevision: 1n }));
    t.ok(wrong instanceof WrongExpectedVersionError, 'a wrong revision throws WrongExpectedVersionError');
    t.match(wrong, { streamName: stream, actualVersion: 4n, expectedVersion: 1n });
    const notNew = await rejection(client.appendToStream(stream, event('X'), { expectedRevision: NO_STREAM }));
    t.ok(notNew instanceof WrongExpectedVersionError);
    t.match(notNew, { actualVersion: 4n, expectedVersion: 'no_stream' });
    const missing = await rejection(client.appendToStream(`shift-${randomUUID()}`, event('X'), { expectedRevision: STREAM_EXISTS }));
    t.ok(missing instanceof WrongExpectedVersionError);
    t.match(missing, { actualVersion: 'no_stream', expectedVersion: 'stream_exists' });
    t.equal(server.events.length, 5, 'refused appends wrote nothing');
    t.same(
      server.events.map((e) => [e.revision, e.type, e.metadata['content-type']]),
      [[0, 'A', 'application/json'], [1, 'B', 'application/json'], [2, 'C', 'application/json'], [3, 'D', 'application/json'], [4, 'E', 'application/json']],
    );
  });

  t.test(`re-appending the same event ids is idempotent (${mode})`, async (t) => {
    const { client, server } = await setup(t, { batchAppend });
    const stream = `shift-${randomUUID()}`;
    const ids = [randomUUID(), randomUUID()];
    const batch = () => [event('A', {}, ids[0]), event('B', {}, ids[1])];

    const original = await client.appendToStream(stream, batch(), { expectedRevision: NO_STREAM });
    await client.appendToStream(stream, event('C'), { expectedRevision: 1n });

    const retried = await client.appendToStream(stream, batch(), { expectedRevision: NO_STREAM });
    t.same(retried, original, 'a retry with the original expectation returns the original result');
    const retriedAny = await client.appendToStream(stream, batch(), { expectedRevision: ANY });
    t.same(retriedAny, original, 'so does a retry with any');
    t.equal(server.events.length, 3, 'nothing was written twice');

    const partial = await rejection(client.appendToStream(stream, [event('A', {}, ids[0]), event('Z')], { expectedRevision: NO_STREAM }));
    t.ok(partial instanceof WrongExpectedVersionError, 'a partial match is a wrong expected version');
  });
}

t.test('readStream forwards and backwards, and a missing stream', async (t) => {
  const { client } = await setup(t);
  const stream = `shift-${randomUUID()}`;
  await client.appendToStream(stream, [event('A', { n: 0 }), event('B', { n: 1 }), event('C', { n: 2 })]);

  const all = await readAllOf(client.readStream(stream));
  t.same(all.map((e) => [e.event?.type, e.event?.revision, e.event?.data]), [['A', 0n, { n: 0 }], ['B', 1n, { n: 1 }], ['C', 2n, { n: 2 }]]);
  const first = all[0]!.event!;
  t.equal(first.streamId, stream);
  t.equal(first.isJson, true);
  t.same(first.position, { commit: 100n, prepare: 100n });
  t.ok(Math.abs(first.created.getTime() - Date.now()) < 60_000, 'created is the append time');
  t.equal(all[0]!.commitPosition, undefined, 'stream reads carry no position on the resolved event');

  const fromRevision = await readAllOf(client.readStream(stream, { fromRevision: 1n, maxCount: 1 }));
  t.same(fromRevision.map((e) => e.event?.type), ['B']);
  const backwards = await readAllOf(client.readStream(stream, { fromRevision: END, direction: BACKWARDS, maxCount: 2 }));
  t.same(backwards.map((e) => e.event?.type), ['C', 'B']);

  const missing = await rejection(readAllOf(client.readStream(`missing-${randomUUID()}`)));
  t.ok(missing instanceof StreamNotFoundError, 'a missing stream throws StreamNotFoundError');
});

t.test('readAll from the start and from a position, system events included', async (t) => {
  const { client, server } = await setup(t);
  await client.appendToStream('shift-1', [event('A'), event('B')]);
  server.appendDirect('$stats-127.0.0.1:2113', [{ type: '$statsCollected' }]);
  const third = await client.appendToStream('other-1', event('C'));

  const forwards = await readAllOf(client.readAll({ fromPosition: START, direction: FORWARDS }));
  t.same(forwards.map((e) => [e.event?.streamId, e.event?.type]), [['shift-1', 'A'], ['shift-1', 'B'], ['$stats-127.0.0.1:2113', '$statsCollected'], ['other-1', 'C']]);
  t.same(forwards.map((e) => e.commitPosition), [100n, 200n, 300n, 400n], '$all reads carry the commit position');

  const fromSecond = await readAllOf(client.readAll({ fromPosition: { commit: 200n, prepare: 200n } }));
  t.same(fromSecond.map((e) => e.event?.type), ['B', '$statsCollected', 'C'], 'reading from a position includes the event at it');

  const backwards = await readAllOf(client.readAll({ fromPosition: END, direction: BACKWARDS, maxCount: 2 }));
  t.same(backwards.map((e) => e.event?.type), ['C', '$statsCollected']);
  t.same(third.position, { commit: 400n, prepare: 400n });
});

t.test('subscribeToAll with a stream-name filter: past then live events, checkpoints across filtered-out events', async (t) => {
  const { client, server, connect } = await setup(t);
  const other = connect();
  await client.appendToStream('shift-a', [event('Past1'), event('Past2')]);
  await client.appendToStream('volunteer-x', [event('Skip1'), event('Skip2'), event('Skip3')]);
  server.appendDirect('$settings', [{ type: '$system' }]);

  const received: ResolvedEvent[] = [];
  const checkpoints: Position[] = [];
  let caughtUp = 0;
  const subscription = client.subscribeToAll({
    fromPosition: START,
    // Checkpoint every 2 events examined (search window 2 × multiplier 1).
    filter: streamNameFilter({
      prefixes: ['shift-'],
      maxSearchWindow: 2,
      checkpointInterval: 1,
      checkpointReached: (_s, position) => void checkpoints.push(position),
    }),
  });
  subscription.on('caughtUp', () => caughtUp++);
  let ended = false;
  const consumer = (async () => {
    for await (const e of subscription) {
      received.push(e);
      if (received.length === 4) {
        await subscription.unsubscribe();
        break;
      }
    }
    ended = true;
  })();

  await until(() => received.length === 2 && caughtUp === 1, 'the past events and caught-up');
  t.same(received.map((e) => e.event?.type), ['Past1', 'Past2']);
  const atCatchUp = checkpoints.at(-1);
  t.same(atCatchUp, { commit: 600n, prepare: 600n }, 'a checkpoint at the end of the log when caught up, past the system event');
  t.same(checkpoints.map((c) => c.commit), [200n, 400n, 600n], 'checkpoints every 2 events examined, filtered out or not');

  // Live: another client appends to other streams only; the position still moves.
  await other.appendToStream('volunteer-y', [event('Skip4'), event('Skip5')]);
  await until(() => checkpoints.length === 4, 'a live checkpoint');
  t.same(checkpoints.at(-1), { commit: 800n, prepare: 800n }, 'the checkpoint passes the filtered-out live events');
  t.equal(received.length, 2, 'filtered-out events are not delivered');

  await other.appendToStream('shift-b', [event('Live1')]);
  await client.appendToStream('shift-a', [event('Live2')]);
  await consumer;
  t.ok(ended);
  t.same(received.map((e) => e.event?.type), ['Past1', 'Past2', 'Live1', 'Live2']);
  t.same(received.map((e) => e.commitPosition), [100n, 200n, 900n, 1000n], 'subscription events carry their commit position');
  t.equal(caughtUp, 1, 'caughtUp is emitted once');
});

t.test('subscribeToAll with event-type filters: a regex (excludeSystemEvents) and prefixes', async (t) => {
  const { client, server } = await setup(t);
  server.appendDirect('$settings', [{ type: '$metadata' }]);
  await client.appendToStream('shift-a', [event('ShiftCreated'), event('ShiftRenamed')]);
  server.appendDirect('$stats-x', [{ type: '$statsCollected' }]);
  await client.appendToStream('volunteer-b', event('VolunteerJoined'));

  const firstTypes = async (filter: Filter, n: number) => {
    const subscription = client.subscribeToAll({ fromPosition: START, filter });
    const types: string[] = [];
    for await (const e of subscription) {
      types.push(e.event!.type);
      if (types.length === n) break;
    }
    await subscription.unsubscribe();
    return types;
  };
  t.same(await firstTypes(excludeSystemEvents(), 3), ['ShiftCreated', 'ShiftRenamed', 'VolunteerJoined']);
  t.same(await firstTypes(eventTypeFilter({ prefixes: ['Volunteer', '$stats'] }), 2), ['$statsCollected', 'VolunteerJoined']);
});

t.test('subscribeToAll from a position resumes after it; subscribeToStream from a revision too', async (t) => {
  const { client } = await setup(t);
  await client.appendToStream('shift-a', [event('A'), event('B'), event('C')]);

  const fromAll = client.subscribeToAll({ fromPosition: { commit: 100n, prepare: 100n } });
  const allTypes: string[] = [];
  for await (const e of fromAll) {
    allTypes.push(e.event!.type);
    if (allTypes.length === 2) break;
  }
  await fromAll.unsubscribe();
  t.same(allTypes, ['B', 'C'], 'a subscription from a position starts after it');

  const fromStream = client.subscribeToStream('shift-a', { fromRevision: 1n });
  const streamTypes: string[] = [];
  const consumer = (async () => {
    for await (const e of fromStream) {
      streamTypes.push(e.event!.type);
      if (streamTypes.length === 2) break;
    }
    await fromStream.unsubscribe();
  })();
  await until(() => streamTypes.length === 1, 'the past stream event');
  await client.appendToStream('shift-a', event('D'));
  await consumer;
  t.same(streamTypes, ['C', 'D']);
});

t.test('dropSubscriptions() ends live subscriptions from the server side', async (t) => {
  const { client, server } = await setup(t);
  await client.appendToStream('shift-a', event('A'));

  const ended = client.subscribeToAll({ fromPosition: START });
  let confirmed = false;
  ended.on('caughtUp', () => (confirmed = true));
  const endedTypes: string[] = [];
  const endedConsumer = (async () => {
    for await (const e of ended) endedTypes.push(e.event!.type);
    return 'ended';
  })();
  await until(() => confirmed, 'caught-up');
  server.dropSubscriptions();
  t.equal(await endedConsumer, 'ended', "a drop with status OK ends the client's iteration");
  t.same(endedTypes, ['A']);

  const failed = client.subscribeToAll({ fromPosition: END });
  let live = false;
  failed.on('caughtUp', () => (live = true));
  const failedConsumer = rejection(
    (async () => {
      for await (const _ of failed) void _;
    })(),
  );
  await until(() => live, 'caught-up');
  server.dropSubscriptions('error');
  t.ok((await failedConsumer) instanceof UnavailableError, 'a drop with an error status throws UnavailableError from the iteration');
});

for (const batchAppend of [true, false]) {
  const mode = batchAppend ? 'BatchAppend' : 'Append';
  t.test(`pause() refuses calls with UNAVAILABLE, resume() serves the same data on the same port (${mode})`, async (t) => {
    const { client, server } = await setup(t, { batchAppend });
    const port = server.port;
    await client.appendToStream('shift-a', [event('A'), event('B')]);

    const subscription = client.subscribeToAll({ fromPosition: START });
    let caughtUp = false;
    subscription.on('caughtUp', () => (caughtUp = true));
    const consumer = rejection(
      (async () => {
        for await (const _ of subscription) void _;
      })(),
    );
    await until(() => caughtUp, 'caught-up');

    await server.pause();
    t.ok((await consumer) instanceof UnavailableError, 'an open subscription fails with UnavailableError');
    t.ok(isUnavailable(await rejection(client.appendToStream('shift-a', event('C')))), 'an append while paused fails with UNAVAILABLE');
    t.ok(isUnavailable(await rejection(readAllOf(client.readStream('shift-a')))), 'so does a read');
    t.equal(server.events.length, 2);

    await server.resume();
    t.equal(server.port, port);
    const after = await client.appendToStream('shift-a', event('C'), { expectedRevision: 1n });
    t.equal(after.nextExpectedRevision, 2n, 'the log survived the pause');
    const read = await readAllOf(client.readStream('shift-a'));
    t.same(read.map((e) => e.event?.type), ['A', 'B', 'C']);
  });
}

t.test('calls the stand-in does not implement answer UNIMPLEMENTED', async (t) => {
  const { client } = await setup(t);
  await client.appendToStream('shift-a', event('A'));
  const error = await rejection(client.deleteStream('shift-a'));
  t.equal((error as { code?: number }).code, 12, 'grpc status 12, UNIMPLEMENTED');
});
