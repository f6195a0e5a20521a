/**
 * The contract of the event store port (src/eventstore/port.ts), written
 * once for every adapter: each adapter's test file calls
 * `eventStoreContract` with a way to open a fresh, empty store.
 */
import { randomUUID } from 'node:crypto';
import type { Test } from 'tap';
import {
  comparePositions,
  type EventStore,
  type EventToAppend,
  type Position,
  type RecordedEvent,
  startOfLog,
  WrongExpectedRevisionError,
} from '../src/eventstore/port.js';
import { until } from './helpers.js';

export interface ContractHarness {
  /** A fresh, empty store. */
  open(): Promise<EventStore>;
  /** Remove what `open` made. */
  cleanup(): Promise<void>;
  /** Append to the same log from another process, as another client would. */
  appendElsewhere(stream: string, events: readonly EventToAppend[]): Promise<void>;
}

export interface ContractOptions {
  /** Whether appendMany is all-or-nothing across streams. */
  readonly atomicAppendMany: boolean;
  /** The store is a server that others use too: its log is not empty at the start of a test. */
  readonly sharedLog?: boolean;
}

const event = (type = 'Thing', data: Record<string, unknown> = {}): EventToAppend => ({
  id: randomUUID(),
  type,
  data: { n: Math.random(), ...data },
});
const stream = (name = 'thing') => `${name}-${randomUUID()}`;

async function readEverything(store: EventStore, after: Position = startOfLog): Promise<RecordedEvent[]> {
  const out: RecordedEvent[] = [];
  let from = after;
  for (;;) {
    const batch = await store.readAll(from, 3);
    if (batch.length === 0) return out;
    out.push(...batch);
    from = batch.at(-1)!.position;
  }
}


export function eventStoreContract(t: Test, name: string, harness: ContractHarness, options: ContractOptions): void {
  t.test(`${name}: event store contract`, async (t) => {
    let store: EventStore;
    t.beforeEach(async () => {
      store = await harness.open();
    });
    t.afterEach(async () => {
      await store.close();
      await harness.cleanup();
    });

    t.test('an empty log', async (t) => {
      if (!options.sharedLog) {
        t.same(await store.head(), startOfLog, 'head is the start of the log');
        t.same(await store.readAll(startOfLog, 10), []);
      }
      t.same(await store.readStream(stream()), [], 'a missing stream reads as empty');
    });

    t.test('append and read back', async (t) => {
      const s = stream();
      const events = [event('A', { x: 1 }), event('B', { nested: { y: [1, 2] } })];
      const result = await store.append(s, events, 'no_stream');
      t.equal(result.nextRevision, 1, 'revisions count from 0');
      const read = await store.readStream(s);
      t.same(
        read.map((e) => [e.id, e.type, e.stream, e.revision, e.data]),
        events.map((e, i) => [e.id, e.type, s, i, e.data]),
        'ids, types, revisions and data as appended',
      );
      t.same(read[1]!.position, result.position, 'the result gives the last event’s position');
      t.same((await store.readStream(s, 1)).map((e) => e.id), [events[1]!.id], 'from a revision: that event and those after');
      t.same(await store.readStream(s, 2), [], 'from past the last revision: nothing');
      t.same(await store.head(), result.position, 'head is the last position');
    });

    t.test('a stream read a page at a time', async (t) => {
      const s = stream();
      const events = Array.from({ length: 7 }, (_, i) => event('A', { i }));
      await store.append(s, events, 'no_stream');
      const pages: number[][] = [];
      for (let from = 0; ; ) {
        const page = await store.readStream(s, from, 3);
        if (page.length === 0) break;
        pages.push(page.map((e) => e.revision));
        from = page[page.length - 1]!.revision + 1;
      }
      t.same(pages, [[0, 1, 2], [3, 4, 5], [6]], 'at most maxCount events, in revision order, from the revision asked for');
      t.same((await store.readStream(s, 0, 100)).map((e) => e.id), events.map((e) => e.id), 'a page longer than the stream: all of it');
      t.same(await store.readStream(stream(), 0, 3), [], 'a missing stream: empty');
    });

    t.test('expected revision', async (t) => {
      const s = stream();
      await store.append(s, [event()], 'no_stream');
      await store.append(s, [event()], 0);
      await store.append(s, [event()], 'stream_exists');
      await store.append(s, [event()], 'any');
      const before = await store.head();
      const cases: Array<[string, string, Parameters<EventStore['append']>[2], number | 'no_stream']> = [
        ['a stale revision', s, 1, 3],
        ['a revision ahead', s, 7, 3],
        ['no_stream on an existing stream', s, 'no_stream', 3],
        ['stream_exists on a missing stream', stream(), 'stream_exists', 'no_stream'],
        ['a revision on a missing stream', stream(), 0, 'no_stream'],
      ];
      for (const [label, target, expected, actual] of cases) {
        await t.rejects(store.append(target, [event()], expected), WrongExpectedRevisionError, `${label} is a conflict`);
        try {
          await store.append(target, [event()], expected);
        } catch (error) {
          const conflict = error as WrongExpectedRevisionError;
          t.equal(conflict.stream, target);
          t.equal(conflict.actual, actual, `${label}: the stream's actual revision is reported`);
        }
      }
      t.same(await store.head(), before, 'a conflict appends nothing');
      t.equal((await store.readStream(s)).length, 4);
    });

    t.test('appends are idempotent by event id', async (t) => {
      const s = stream();
      const events = [event(), event()];
      const first = await store.append(s, events);
      const again = await store.append(s, events);
      t.same(again, first, 'a repeated append answers as the first did');
      t.equal((await store.readStream(s)).length, 2, 'and appends nothing');
      const repeatedStale = await store.append(s, events, 'no_stream');
      t.same(repeatedStale, first, 'a retry succeeds even though its expected revision is now stale');
      const fresh = event();
      const mixed = await store.append(s, [events[1]!, fresh]);
      t.equal(mixed.nextRevision, 2, 'known ids are skipped, new ones appended');
      t.same((await store.readStream(s)).map((e) => e.id), [...events.map((e) => e.id), fresh.id]);
      const twice = event();
      await store.append(stream(), [twice, twice]);
      t.equal((await readEverything(store)).filter((e) => e.id === twice.id).length, 1, 'an id twice in one append is stored once');
    });

    t.test('readAll: log order, exclusive start, batches', async (t) => {
      const start = await store.head();
      const appended: string[] = [];
      for (let i = 0; i < 4; i++) {
        const events = [event(), event()];
        await store.append(stream(`s${i}`), events);
        appended.push(...events.map((e) => e.id));
      }
      const all = await readEverything(store, start);
      t.same(all.map((e) => e.id), appended, 'every event once, in append order');
      for (let i = 1; i < all.length; i++) {
        t.ok(comparePositions(all[i - 1]!.position, all[i]!.position) < 0, 'positions increase');
      }
      const after = await store.readAll(all[2]!.position, 2);
      t.same(after.map((e) => e.id), appended.slice(3, 5), 'reading from a position starts after it, up to maxCount');
      t.same(await store.readAll(all.at(-1)!.position, 10), [], 'nothing after the head');
    });

    t.test('appendMany', async (t) => {
      const a = stream();
      const b = stream();
      const { position } = await store.appendMany([
        { stream: a, events: [event(), event()], expectedRevision: 'no_stream' },
        { stream: b, events: [event()] },
      ]);
      t.same(position, await store.head(), 'gives the last position');
      t.equal((await store.readStream(a)).length, 2);
      t.equal((await store.readStream(b)).length, 1);
      const before = await store.head();
      const c = stream();
      await t.rejects(
        store.appendMany([
          { stream: c, events: [event()] },
          { stream: a, events: [event()], expectedRevision: 0 },
        ]),
        WrongExpectedRevisionError,
      );
      if (options.atomicAppendMany) {
        t.same(await store.head(), before, 'a conflict in one stream appends nothing at all');
        t.same(await store.readStream(c), []);
      } else {
        t.equal((await store.readStream(c)).length, 1, 'streams before the conflicting one were appended');
      }
    });

    t.test('subscription: catch up, then follow', async (t) => {
      const old = [event(), event()];
      await store.append(stream(), old);
      const seen: RecordedEvent[] = [];
      let caughtUp: Position | undefined;
      const subscription = store.subscribe(startOfLog, {
        onEvents: async (events) => {
          seen.push(...events);
        },
        onCaughtUp: (head) => {
          caughtUp = head;
        },
      });
      try {
        await until(() => caughtUp, 2000);
        t.same(seen.map((e) => e.id), old.map((e) => e.id), 'existing events first');
        const live = [event(), event()];
        await store.append(stream(), live);
        await until(() => (seen.length === 4 ? true : undefined), 2000);
        t.same(seen.map((e) => e.id), [...old, ...live].map((e) => e.id), 'then new ones, in order, once');
      } finally {
        await subscription.close();
      }
      await store.append(stream(), [event()]);
      await new Promise((resolve) => setTimeout(resolve, 150));
      t.equal(seen.length, 4, 'nothing is delivered after close');
    });

    t.test('subscription from a position starts after it', async (t) => {
      await store.append(stream(), [event(), event()]);
      const { position } = await store.append(stream(), [event()]);
      const later = event();
      await store.append(stream(), [later]);
      const seen: string[] = [];
      let caughtUp = false;
      const subscription = store.subscribe(position, {
        onEvents: async (events) => {
          seen.push(...events.map((e) => e.id));
        },
        onCaughtUp: () => {
          caughtUp = true;
        },
      });
      await until(() => (caughtUp ? true : undefined), 2000);
      await subscription.close();
      t.same(seen, [later.id]);
    });

    t.test('a subscription sees appends by another process within a second', async (t) => {
      const seen = new Map<string, number>();
      let caughtUp = false;
      const subscription = store.subscribe(startOfLog, {
        onEvents: async (events) => {
          for (const e of events) seen.set(e.id, Date.now());
        },
        onCaughtUp: () => {
          caughtUp = true;
        },
      });
      try {
        await until(() => (caughtUp ? true : undefined), 2000);
        const elsewhere = [event('FromElsewhere')];
        await harness.appendElsewhere(stream(), elsewhere);
        const appendedAt = Date.now();
        const deliveredAt = await until(() => seen.get(elsewhere[0]!.id), 1000);
        t.ok(deliveredAt - appendedAt <= 1000, `delivered ${deliveredAt - appendedAt} ms after the other process appended`);
      } finally {
        await subscription.close();
      }
    });
  });
}
