/**
 * The EventStoreDB adapter of the event store port, on @eventstore/db-client.
 * Everything specific to that client lives in this one module, so moving
 * to its successor package is a change of this file.
 *
 * - Appends map our expected revisions to the client's; WrongExpectedVersion
 *   becomes our WrongExpectedRevisionError. Appends are idempotent by event
 *   id within a stream: ids found among the stream's recent events are
 *   skipped, and a repeat of a whole append answers as the first did.
 * - Reads of $all and the projector's subscription see only this service's
 *   streams (a server-side prefix filter skips system events and other
 *   applications' streams); checkpoints move the position across the
 *   events filtered out.
 * - The subscription is consumed with `for await` (backpressure: the next
 *   event is pulled once the last batch is applied). When it ends or fails
 *   (server restart, dropped connection, "consumer too slow") it resubscribes
 *   from the last applied position with capped exponential backoff; an event
 *   delivered twice is skipped by position.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { createRequire } from 'node:module';
import type * as DbClient from '@eventstore/db-client';
import type { AllStreamResolvedEvent, AppendExpectedRevision, EventStoreDBClient, ResolvedEvent } from '@eventstore/db-client';
import { isEventType, parseEvent, streamPrefixes } from '../events/catalog.js';
import {
  type AppendManyResult,
  type AppendResult,
  comparePositions,
  type EventStore,
  type EventToAppend,
  type ExpectedRevision,
  type Position,
  type RecordedEvent,
  type StreamAppend,
  type Subscription,
  type SubscriptionHandler,
  startOfLog,
  StoreUnavailableError,
  WrongExpectedRevisionError,
} from './port.js';

/**
 * The client library, loaded when an EventStoreDB store is first opened: its gRPC stack took 0.2 s of every start,
 * also of the embedded log's servers and commands, which never use it. (It is CommonJS: required in place.)
 */
let library: typeof DbClient | undefined;
const db = (): typeof DbClient => (library ??= createRequire(import.meta.url)('@eventstore/db-client') as typeof DbClient);

export interface EsdbOptions {
  /** Stream name prefixes that are ours (default: every stream of the event catalog). */
  readonly prefixes?: readonly string[];
  /** Events examined between two checkpoints of the subscription filter (the server's search window). */
  readonly checkpointInterval?: number;
  /** Resubscription backoff, in ms: first wait and cap. */
  readonly backoff?: { readonly initialMs: number; readonly maxMs: number };
  /** How many of a stream's latest events an append checks for repeated ids. */
  readonly idempotencyWindow?: number;
}

/** Events handed to the projector at once, at most. */
const BATCH = 1000;

const toExpected = (expected: ExpectedRevision): AppendExpectedRevision =>
  expected === 'any' ? db().ANY : expected === 'no_stream' ? db().NO_STREAM : expected === 'stream_exists' ? db().STREAM_EXISTS : BigInt(expected);

function recorded(resolved: ResolvedEvent | AllStreamResolvedEvent): RecordedEvent | undefined {
  const e = resolved.event;
  if (!e || !e.position) return undefined;
  const event = {
    id: e.id,
    type: e.type,
    stream: e.streamId,
    revision: Number(e.revision),
    position: { commit: e.position.commit, prepare: e.position.prepare },
  };
  if (!isEventType(e.type)) return { ...event, data: e.data };
  // Other writers of the database may append anything to our streams: an
  // event of ours is checked against the catalog as it is read (the
  // embedded log holds only events checked before they were appended).
  const parsed = parseEvent(e.type, e.data);
  if (parsed.success) return { ...event, data: parsed.data };
  const [issue] = parsed.error.issues;
  return { ...event, data: e.data, invalid: issue ? `${['data', ...issue.path].join('.')}: ${issue.message}` : 'invalid data' };
}

/** A missing stream reads as no events. */
function notFoundAsEmpty(error: unknown): RecordedEvent[] {
  if (error instanceof db().StreamNotFoundError) return [];
  throw error;
}

/** Whether a gRPC failure means the server cannot be reached (the client does not always wrap it). */
function isUnavailable(error: unknown): boolean {
  const e = error as { code?: number; type?: string } | undefined;
  return e?.code === 14 || e?.type === 'unavailable';
}

export class EsdbEventStore implements EventStore {
  readonly kind = 'eventstoredb';
  private readonly prefixes: string[];
  private readonly checkpointInterval: number;
  private readonly backoff: { initialMs: number; maxMs: number };
  private readonly window: number;

  constructor(
    private readonly client: EventStoreDBClient,
    options: EsdbOptions = {},
  ) {
    this.prefixes = [...(options.prefixes ?? streamPrefixes)];
    this.checkpointInterval = options.checkpointInterval ?? 32;
    this.backoff = { initialMs: 100, maxMs: 5000, ...options.backoff };
    this.window = options.idempotencyWindow ?? 1000;
  }

  static open(connectionString: string, options: EsdbOptions = {}): EsdbEventStore {
    return new EsdbEventStore(db().EventStoreDBClient.connectionString(connectionString), options);
  }

  async append(stream: string, events: readonly EventToAppend[], expectedRevision: ExpectedRevision = 'any'): Promise<AppendResult> {
    return this.call(async () => {
      const known = await this.recentIds(stream);
      const fresh: EventToAppend[] = [];
      for (const e of events) if (!known.has(e.id) && !fresh.some((f) => f.id === e.id)) fresh.push(e);
      if (fresh.length === 0) {
        // Every event is already in the stream: answer as the first append did.
        const last = events.at(-1);
        const first = last && known.get(last.id)!;
        if (first) return { nextRevision: first.revision, position: first.position };
        // An append of nothing: the stream as it stands.
        const [head] = await this.collect(this.client.readStream(stream, { direction: db().BACKWARDS, fromRevision: db().END, maxCount: 1 })).catch(
          notFoundAsEmpty,
        );
        return { nextRevision: head?.revision ?? -1, position: head?.position ?? startOfLog };
      }
      try {
        const result = await this.client.appendToStream(
          stream,
          fresh.map((e) => db().jsonEvent({ id: e.id, type: e.type, data: e.data as Record<string, unknown> })),
          { expectedRevision: toExpected(expectedRevision) },
        );
        if (!result.position) throw new Error(`append to ${stream}: the server gave no position`);
        return {
          nextRevision: Number(result.nextExpectedRevision),
          position: { commit: result.position.commit, prepare: result.position.prepare },
        };
      } catch (error) {
        if (error instanceof db().WrongExpectedVersionError) {
          const actual = error.actualVersion;
          throw new WrongExpectedRevisionError(stream, expectedRevision, typeof actual === 'bigint' ? Number(actual) : 'no_stream');
        }
        throw error;
      }
    });
  }

  /** Stream by stream, in order; stops at the first failure (EventStoreDB has no multi-stream transaction). */
  /** Stream by stream; known revisions are not taken (EventStoreDB checks each stream's revision itself). */
  async appendMany(appends: Iterable<StreamAppend>): Promise<AppendManyResult> {
    let last: Position | undefined;
    for (const { stream, events, expectedRevision } of appends) last = (await this.append(stream, events, expectedRevision)).position;
    return { position: last, tookKnown: false };
  }

  async readStream(stream: string, fromRevision = 0, maxCount = Infinity): Promise<RecordedEvent[]> {
    return this.call(() =>
      this.collect(
        this.client.readStream(stream, {
          direction: db().FORWARDS,
          fromRevision: fromRevision > 0 ? BigInt(fromRevision) : db().START,
          ...(maxCount === Infinity ? {} : { maxCount }),
        }),
      ).catch(notFoundAsEmpty),
    );
  }

  async readAll(from: Position, maxCount: number): Promise<RecordedEvent[]> {
    return this.call(async () => {
      const out: RecordedEvent[] = [];
      const pageSize = Math.max(maxCount + 1, 500);
      // $all reads start *at* a position: skip what is at or before the cursor (the port's start is exclusive).
      let cursor: Position | undefined = from.commit < 0n ? undefined : from;
      for (;;) {
        // Read each page to its end: leaving a read early leaves its call open.
        const page = await this.collect(this.client.readAll({ direction: db().FORWARDS, fromPosition: cursor ?? db().START, maxCount: pageSize }));
        const count = page.length;
        let last: RecordedEvent | undefined;
        for (const e of page) {
          if (cursor && comparePositions(e.position, cursor) <= 0) continue;
          last = e;
          if (this.ours(e.stream)) out.push(e);
          if (out.length === maxCount) return out;
        }
        // A short page is the end of the log; otherwise read on after its last event.
        if (!last || count < pageSize) return out;
        cursor = last.position;
      }
    });
  }

  async head(): Promise<Position> {
    return this.call(async () => {
      const [last] = await this.collect(this.client.readAll({ direction: db().BACKWARDS, fromPosition: db().END, maxCount: 1 }));
      return last?.position ?? startOfLog;
    });
  }

  subscribe(from: Position, handler: SubscriptionHandler): Subscription {
    let position = from;
    let closed = false;
    let current: { unsubscribe(): Promise<void>; destroy(): void } | undefined;
    let wake: (() => void) | undefined;

    const run = async () => {
      let failures = 0;
      while (!closed) {
        let caughtUp = false;
        const markCaughtUp = () => {
          if (caughtUp) return;
          caughtUp = true;
          handler.onCaughtUp?.(position);
        };
        try {
          // Caught up once the log's end as it was at (re)subscription is applied (or the server says so).
          const head = await this.head();
          handler.onHead?.(head);
          const reachedHead = () => {
            if (head.commit < 0n || comparePositions(position, head) >= 0) markCaughtUp();
          };
          let batch: RecordedEvent[] = [];
          // Handler calls one at a time, in log order.
          let serial = Promise.resolve();
          const inOrder = (fn: () => Promise<void>) => (serial = serial.then(fn));
          const flush = () =>
            inOrder(async () => {
              if (batch.length === 0) return;
              const events = batch;
              batch = [];
              await handler.onEvents(events);
              position = events.at(-1)!.position;
              failures = 0;
              reachedHead();
            });
          // The consumer below is idle when every event received so far is applied.
          let busy = false;
          let idleWaiters: Array<() => void> = [];
          const idle = () => {
            for (const resolve of idleWaiters) resolve();
            idleWaiters = [];
          };
          const subscription = this.client.subscribeToAll({
            fromPosition: position.commit < 0n ? db().START : position,
            filter: db().streamNameFilter({
              prefixes: this.prefixes,
              // The server checkpoints every maxSearchWindow × checkpointInterval events examined.
              maxSearchWindow: this.checkpointInterval,
              checkpointInterval: 1,
              // The client waits for this callback before passing on later
              // events, but events before the checkpoint may still be on their
              // way to the consumer: wait until it has applied them, so the
              // position never moves past an event not yet applied.
              checkpointReached: async (_subscription, checkpoint) => {
                if (busy || batch.length > 0 || subscription.readableLength > 0) {
                  await new Promise<void>((resolve) => idleWaiters.push(resolve));
                }
                await inOrder(async () => {
                  if (comparePositions(checkpoint, position) <= 0) return;
                  await handler.onCheckpoint?.(checkpoint);
                  position = checkpoint;
                  reachedHead();
                });
              },
            }),
          });
          current = subscription;
          subscription.on('caughtUp', () => void inOrder(async () => markCaughtUp()));
          reachedHead();
          for await (const resolved of subscription) {
            if (closed) break;
            busy = true;
            const e = recorded(resolved);
            // Positions only grow: anything at or before the last one taken was delivered twice.
            if (e && comparePositions(e.position, batch.at(-1)?.position ?? position) > 0) batch.push(e);
            // Hand over what has arrived: a full batch, or whatever is there once nothing more is buffered.
            if (batch.length >= BATCH || subscription.readableLength === 0) await flush();
            busy = false;
            if (batch.length === 0 && subscription.readableLength === 0) idle();
          }
          idle();
          await subscription.unsubscribe();
          if (closed) break;
          // The server ended the subscription without an error: resubscribe.
          handler.onError?.(new StoreUnavailableError('the subscription ended; resubscribing'));
        } catch (error) {
          if (closed) break;
          handler.onError?.(error);
        }
        failures++;
        const wait = Math.min(this.backoff.initialMs * 2 ** (failures - 1), this.backoff.maxMs);
        await Promise.race([sleep(wait), new Promise<void>((resolve) => (wake = resolve))]);
      }
    };
    const running = run();
    return {
      close: async () => {
        closed = true;
        wake?.();
        // unsubscribe() cancels the call, but the client then never ends the
        // iteration: destroy the stream so `for await` returns.
        await current?.unsubscribe().catch(() => undefined);
        current?.destroy();
        await running;
      },
    };
  }

  async close(): Promise<void> {
    await this.client.dispose();
  }

  private ours(stream: string): boolean {
    return this.prefixes.some((p) => stream.startsWith(p));
  }

  /** The stream's latest events by id (within the idempotency window). */
  private async recentIds(stream: string): Promise<Map<string, RecordedEvent>> {
    const latest = await this.collect(
      this.client.readStream(stream, { direction: db().BACKWARDS, fromRevision: db().END, maxCount: this.window }),
    ).catch(notFoundAsEmpty);
    return new Map(latest.map((e) => [e.id, e]));
  }

  /** Every event of a read, to its end. */
  private async collect(read: AsyncIterable<ResolvedEvent | AllStreamResolvedEvent>): Promise<RecordedEvent[]> {
    const out: RecordedEvent[] = [];
    for await (const resolved of read) {
      const e = recorded(resolved);
      if (e) out.push(e);
    }
    return out;
  }

  /** Run a call; a server that cannot be reached becomes StoreUnavailableError. */
  private async call<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      if (isUnavailable(error)) throw new StoreUnavailableError('EventStoreDB is unavailable', { cause: error });
      throw error;
    }
  }
}
