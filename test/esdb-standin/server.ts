/**
 * A protocol-level stand-in for an EventStoreDB 23.x server, for tests only
 * (no EventStoreDB can be installed where the tests run).
 *
 * It serves the gRPC services the official Node client
 * (@eventstore/db-client 6.2.1) calls for streams — ServerFeatures.
 * GetSupportedMethods, Streams.Append, Streams.BatchAppend and Streams.Read
 * (reads, $all reads with filters, catch-up subscriptions) — built on the
 * service definitions and jspb message classes generated inside the client,
 * so the wire format is exactly the one the client speaks. Everything else
 * (Delete, Tombstone, Gossip, persistent subscriptions, projections, users…)
 * answers UNIMPLEMENTED, which grpc-js does for any method without a handler.
 *
 * The log lives in memory and survives pause()/resume() (a "server restart"
 * on the same port).
 */
import { randomUUID } from 'node:crypto';
import type { EventEmitter } from 'node:events';
import { createRequire } from 'node:module';
import * as grpc from '@grpc/grpc-js';
import type * as StreamsPb from '@eventstore/db-client/generated/streams_pb.js';
import type * as SharedPb from '@eventstore/db-client/generated/shared_pb.js';
import type * as StatusPb from '@eventstore/db-client/generated/status_pb.js';
import type * as ServerFeaturesPb from '@eventstore/db-client/generated/serverfeatures_pb.js';
import type * as StreamsGrpcPb from '@eventstore/db-client/generated/streams_grpc_pb.js';
import type * as ServerFeaturesGrpcPb from '@eventstore/db-client/generated/serverfeatures_grpc_pb.js';
import type * as CodePb from '@eventstore/db-client/generated/code_pb.js';
import type * as AnyPb from 'google-protobuf/google/protobuf/any_pb.js';
import type * as EmptyPb from 'google-protobuf/google/protobuf/empty_pb.js';

// The generated modules are CommonJS that Node's ESM loader cannot see named
// exports in (they attach them through goog.object.extend): load them with
// require, typed by their .d.ts.
const require = createRequire(import.meta.url);
const generated = (name: string): unknown => require(`@eventstore/db-client/generated/${name}.js`);
const streamsPb = generated('streams_pb') as typeof StreamsPb;
const sharedPb = generated('shared_pb') as typeof SharedPb;
const statusPb = generated('status_pb') as typeof StatusPb;
const featuresPb = generated('serverfeatures_pb') as typeof ServerFeaturesPb;
const streamsGrpc = generated('streams_grpc_pb') as typeof StreamsGrpcPb;
const featuresGrpc = generated('serverfeatures_grpc_pb') as typeof ServerFeaturesGrpcPb;
// google.protobuf.Any and Empty (BatchAppend uses the latter where the other
// messages use event_store.client.Empty) from the very copy of
// google-protobuf the client uses: it is the client's dependency, not the project's.
const requireFromClient = createRequire(require.resolve('@eventstore/db-client/generated/status_pb.js'));
const anyPb = requireFromClient('google-protobuf/google/protobuf/any_pb') as typeof AnyPb;
const { Empty: anyEmpty } = requireFromClient('google-protobuf/google/protobuf/empty_pb') as typeof EmptyPb;

type ReadReq = StreamsPb.ReadReq;
type ReadResp = StreamsPb.ReadResp;
type ReadOptions = StreamsPb.ReadReq.Options;
type AppendReq = StreamsPb.AppendReq;
type AppendResp = StreamsPb.AppendResp;
type BatchAppendReq = StreamsPb.BatchAppendReq;
type BatchAppendResp = StreamsPb.BatchAppendResp;

export interface StandInOptions {
  /** Whether GetSupportedMethods lists Streams.BatchAppend (as EventStoreDB 21.10+ does), so the client appends through it. Default true. */
  batchAppend?: boolean;
}

/** One event of the in-memory log. */
export interface StoredEvent {
  stream: string;
  revision: number;
  id: string;
  type: string;
  data: Buffer;
  /** The system metadata map sent back on reads: type, content-type, created (ticks of 100 ns since the Unix epoch). */
  metadata: Record<string, string>;
  customMetadata: Buffer;
  commit: bigint;
  prepare: bigint;
}

/** An event to append directly (see EsdbStandIn.appendDirect). */
export interface DirectEvent {
  type: string;
  data?: unknown;
  id?: string;
  contentType?: string;
}

const SERVER_VERSION = '23.10.0';
/** EventStoreDB's read batch size: the search window of a filter sent with `count` instead of `max`. */
const DEFAULT_SEARCH_WINDOW = 32;
/** Positions are (index + 1) * 100: strictly increasing, never 0, and not the event's index (so a test cannot confuse the two). */
const POSITION_STEP = 100n;

// ---------------------------------------------------------------- the log

type Expected =
  | { kind: 'any' }
  | { kind: 'no_stream' }
  | { kind: 'stream_exists' }
  | { kind: 'revision'; revision: number };

interface Proposed {
  id: string;
  metadata: Record<string, string>;
  data: Buffer;
  customMetadata: Buffer;
}

type AppendOutcome =
  | { ok: true; revision: number; position: { commit: bigint; prepare: bigint } | undefined }
  | { ok: false; current: number };

class Log {
  readonly all: StoredEvent[] = [];
  private readonly streams = new Map<string, StoredEvent[]>();

  stream(name: string): readonly StoredEvent[] | undefined {
    return this.streams.get(name);
  }

  /** The stream's last revision, or -1 when it has no events. */
  current(name: string): number {
    return (this.streams.get(name)?.length ?? 0) - 1;
  }

  /**
   * Appends like EventStoreDB: a retried write (same event ids at the same
   * place) succeeds without writing and returns the original result; then
   * the expected revision is checked against the current one.
   */
  append(stream: string, expected: Expected, proposed: readonly Proposed[]): AppendOutcome {
    const existing = this.streams.get(stream) ?? [];
    const current = existing.length - 1;
    const replay = findIdempotentReplay(existing, expected, proposed);
    if (replay === 'corrupt') return { ok: false, current };
    if (replay) return { ok: true, revision: replay.revision, position: positionOf(replay) };
    if (!expectationHolds(expected, current)) return { ok: false, current };
    if (proposed.length === 0) {
      const last = existing.at(-1);
      return { ok: true, revision: current, position: last && positionOf(last) };
    }
    const written = proposed.map((p) => this.write(stream, p));
    const last = written.at(-1)!;
    return { ok: true, revision: last.revision, position: positionOf(last) };
  }

  private write(stream: string, p: Proposed): StoredEvent {
    let events = this.streams.get(stream);
    if (!events) this.streams.set(stream, (events = []));
    const position = BigInt(this.all.length + 1) * POSITION_STEP;
    const event: StoredEvent = {
      stream,
      revision: events.length,
      id: p.id,
      type: p.metadata['type'] ?? '',
      data: p.data,
      metadata: { ...p.metadata, created: (BigInt(Date.now()) * 10_000n).toString() },
      customMetadata: p.customMetadata,
      commit: position,
      prepare: position,
    };
    events.push(event);
    this.all.push(event);
    return event;
  }
}

const positionOf = (e: StoredEvent) => ({ commit: e.commit, prepare: e.prepare });

function expectationHolds(expected: Expected, current: number): boolean {
  switch (expected.kind) {
    case 'any':
      return true;
    case 'no_stream':
      return current === -1;
    case 'stream_exists':
      return current >= 0;
    case 'revision':
      return current === expected.revision;
  }
}

/**
 * EventStoreDB's idempotency check: with an explicit expectation (a revision
 * or no_stream) the proposed ids must be exactly the events right after the
 * expected revision; with any/stream_exists the first id is looked up and the
 * rest must follow it. A partial match is "corrupted idempotency", which the
 * server reports as a wrong expected version.
 */
function findIdempotentReplay(
  existing: readonly StoredEvent[],
  expected: Expected,
  proposed: readonly Proposed[],
): StoredEvent | 'corrupt' | undefined {
  const first = proposed[0];
  if (!first) return undefined;
  let start: number;
  if (expected.kind === 'revision' || expected.kind === 'no_stream') {
    start = expected.kind === 'revision' ? expected.revision + 1 : 0;
    if (start >= existing.length || existing[start]?.id !== first.id) return undefined;
  } else {
    start = existing.findIndex((e) => e.id === first.id);
    if (start < 0) return undefined;
  }
  const matches = proposed.every((p, i) => existing[start + i]?.id === p.id);
  return matches ? existing[start + proposed.length - 1] : 'corrupt';
}

// ------------------------------------------------------- message helpers

const empty = () => new sharedPb.Empty();
const utf8 = (bytes: Uint8Array | string) => (typeof bytes === 'string' ? bytes : Buffer.from(bytes).toString('utf8'));

function streamIdentifier(name: string): SharedPb.StreamIdentifier {
  return new sharedPb.StreamIdentifier().setStreamName(Buffer.from(name, 'utf8'));
}

function parseUuid(uuid: SharedPb.UUID | undefined): string {
  if (!uuid) return randomUUID();
  if (!uuid.hasStructured()) return uuid.getString();
  const s = uuid.getStructured()!;
  const hex = (v: string) => BigInt.asUintN(64, BigInt(v)).toString(16).padStart(16, '0');
  const h = hex(s.getMostSignificantBits()) + hex(s.getLeastSignificantBits());
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** The client asks for ids as strings; .NET servers also send them "structured" (two signed 64-bit halves) on request. */
function uuidMessage(id: string, structured: boolean): SharedPb.UUID {
  const uuid = new sharedPb.UUID();
  if (!structured) return uuid.setString(id);
  const hex = id.replaceAll('-', '');
  const half = (h: string) => BigInt.asIntN(64, BigInt(`0x${h}`)).toString();
  return uuid.setStructured(
    new sharedPb.UUID.Structured().setMostSignificantBits(half(hex.slice(0, 16))).setLeastSignificantBits(half(hex.slice(16))),
  );
}

function proposedFrom(message: StreamsPb.AppendReq.ProposedMessage | StreamsPb.BatchAppendReq.ProposedMessage): Proposed {
  const metadata: Record<string, string> = {};
  message.getMetadataMap().forEach((value, key) => (metadata[key] = value));
  return {
    id: parseUuid(message.getId()),
    metadata,
    data: Buffer.from(message.getData_asU8()),
    customMetadata: Buffer.from(message.getCustomMetadata_asU8()),
  };
}

/** EventStoreDB refuses events without these two metadata entries. */
const missingRequiredMetadata = (proposed: readonly Proposed[]) =>
  proposed.some((p) => p.metadata['type'] === undefined || p.metadata['content-type'] === undefined);

/** A gRPC error the client converts to its own error class through the `exception` trailer, as EventStoreDB sends it. */
function esdbError(code: grpc.status, exception: string, details: string): Partial<grpc.StatusObject> {
  const metadata = new grpc.Metadata();
  metadata.set('exception', exception);
  return { code, details, metadata };
}

const unavailable = (details: string): Partial<grpc.StatusObject> => ({ code: grpc.status.UNAVAILABLE, details });

function recordedEvent(e: StoredEvent, structuredIds: boolean): StreamsPb.ReadResp.ReadEvent.RecordedEvent {
  const recorded = new streamsPb.ReadResp.ReadEvent.RecordedEvent()
    .setId(uuidMessage(e.id, structuredIds))
    .setStreamIdentifier(streamIdentifier(e.stream))
    .setStreamRevision(String(e.revision))
    .setPreparePosition(e.prepare.toString())
    .setCommitPosition(e.commit.toString())
    .setData(e.data)
    .setCustomMetadata(e.customMetadata);
  const map = recorded.getMetadataMap();
  for (const [key, value] of Object.entries(e.metadata)) map.set(key, value);
  return recorded;
}

/** $all reads carry the event's commit position on the ReadEvent itself; stream reads say "no position" there. */
function eventResp(e: StoredEvent, fromAll: boolean, structuredIds: boolean): ReadResp {
  const read = new streamsPb.ReadResp.ReadEvent().setEvent(recordedEvent(e, structuredIds));
  if (fromAll) read.setCommitPosition(e.commit.toString());
  else read.setNoPosition(empty());
  return new streamsPb.ReadResp().setEvent(read);
}

const checkpointResp = (e: StoredEvent) =>
  new streamsPb.ReadResp().setCheckpoint(
    new streamsPb.ReadResp.Checkpoint().setCommitPosition(e.commit.toString()).setPreparePosition(e.prepare.toString()),
  );

// ------------------------------------------------------- read requests

type EventFilter = (e: StoredEvent) => boolean;

interface Filter {
  matches: EventFilter;
  /** Events examined (matching or not) between two checkpoints. */
  checkpointInterval: number;
}

/** The filter of a $all read: on the stream name or the event type, by prefixes or a regular expression. */
function filterFrom(options: StreamsPb.ReadReq.Options.FilterOptions): Filter {
  const onStream = options.hasStreamIdentifier();
  const expression = onStream ? options.getStreamIdentifier()! : options.getEventType()!;
  const prefixes = expression.getPrefixList();
  const regex = expression.getRegex() ? new RegExp(expression.getRegex()) : undefined;
  const subject = (e: StoredEvent) => (onStream ? e.stream : e.type);
  const matches: EventFilter = (e) => {
    const s = subject(e);
    if (prefixes.length > 0 && !prefixes.some((p) => s.startsWith(p))) return false;
    return regex ? regex.test(s) : true;
  };
  // As the server does: the interval is the search window (`max`, or the read
  // batch size when the client sent `count`) times the multiplier.
  const window = options.hasMax() ? options.getMax() : DEFAULT_SEARCH_WINDOW;
  return { matches, checkpointInterval: Math.max(1, window * Math.max(1, options.getCheckpointintervalmultiplier())) };
}

function readCount(options: ReadOptions): number {
  const count = Number(options.getCount());
  return Number.isFinite(count) && count >= 0 ? count : Number.MAX_SAFE_INTEGER;
}

/** Index in the log of the first event at or after `position` (or strictly after it). */
function indexOfPosition(log: readonly StoredEvent[], commit: bigint, exclusive: boolean): number {
  const i = log.findIndex((e) => (exclusive ? e.commit > commit : e.commit >= commit));
  return i < 0 ? log.length : i;
}

// ------------------------------------------------------- active calls

/** An open call the server can fail, with UNAVAILABLE on pause() and stop(). */
interface ActiveCall {
  fail(status: Partial<grpc.StatusObject>): void;
}

/** Writes with backpressure; false when the call ended meanwhile. */
async function send(call: grpc.ServerWritableStream<ReadReq, ReadResp>, message: ReadResp): Promise<boolean> {
  if (call.cancelled || call.writableEnded || call.destroyed) return false;
  if (call.write(message)) return true;
  await new Promise<void>((resolve) => {
    const done = () => {
      call.off('drain', done);
      call.off('close', done);
      call.off('cancelled', done);
      resolve();
    };
    call.on('drain', done);
    call.on('close', done);
    call.on('cancelled', done);
  });
  return !(call.cancelled || call.writableEnded || call.destroyed);
}

/**
 * A catch-up subscription: a cursor over the log ($all) or one stream, moved
 * by pump() after the subscription starts and after every append. Sends past
 * events, then CaughtUp once the cursor first reaches the end, then live
 * events. A filtered $all subscription sends a Checkpoint every
 * `checkpointInterval` events examined (matching or not), and when it
 * catches up, so its position moves across the events it does not receive.
 */
class Subscriber implements ActiveCall {
  private pumping = false;
  private caughtUp = false;
  private examined = 0;

  constructor(
    private readonly call: grpc.ServerWritableStream<ReadReq, ReadResp>,
    private readonly source: () => readonly StoredEvent[],
    private cursor: number,
    private readonly fromAll: boolean,
    private readonly filter: Filter | undefined,
    private readonly structuredIds: boolean,
  ) {}

  get open(): boolean {
    return !(this.call.cancelled || this.call.writableEnded || this.call.destroyed);
  }

  async start(): Promise<void> {
    const confirmation = new streamsPb.ReadResp.SubscriptionConfirmation().setSubscriptionId(randomUUID());
    if (await send(this.call, new streamsPb.ReadResp().setConfirmation(confirmation))) await this.pump();
  }

  /** Sends everything between the cursor and the end of the source; re-entrant calls are absorbed by the running loop. */
  async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.open) {
        const events = this.source();
        const event = events[this.cursor];
        if (!event) {
          if (!this.caughtUp) await this.reachHead(events.at(-1));
          if (this.source().length === this.cursor) break;
          continue;
        }
        this.cursor++;
        if (!(await this.deliver(event))) break;
      }
    } finally {
      this.pumping = false;
    }
  }

  private async deliver(event: StoredEvent): Promise<boolean> {
    if (!this.filter) return send(this.call, eventResp(event, this.fromAll, this.structuredIds));
    if (this.filter.matches(event) && !(await send(this.call, eventResp(event, true, this.structuredIds)))) return false;
    if (++this.examined < this.filter.checkpointInterval) return true;
    this.examined = 0;
    return send(this.call, checkpointResp(event));
  }

  private async reachHead(last: StoredEvent | undefined): Promise<void> {
    this.caughtUp = true;
    if (this.filter && last && this.examined > 0) {
      this.examined = 0;
      if (!(await send(this.call, checkpointResp(last)))) return;
    }
    await send(this.call, new streamsPb.ReadResp().setCaughtUp(new streamsPb.ReadResp.CaughtUp()));
  }

  fail(status: Partial<grpc.StatusObject>): void {
    if (this.open) this.call.emit('error', status);
  }

  end(): void {
    if (this.open) this.call.end();
  }
}

// ------------------------------------------------------- the server

export class EsdbStandIn {
  private readonly log = new Log();
  private readonly active = new Set<ActiveCall>();
  private readonly subscribers = new Set<Subscriber>();
  private server: grpc.Server | undefined;
  /** Known once bound (the first bind asks for a random one); resume() binds it again. */
  private boundPort = 0;
  private constructor(private readonly options: Required<StandInOptions>) {}

  static async start(options: StandInOptions = {}): Promise<EsdbStandIn> {
    const standIn = new EsdbStandIn({ batchAppend: options.batchAppend ?? true });
    await standIn.listen();
    return standIn;
  }

  get port(): number {
    return this.boundPort;
  }

  get connectionString(): string {
    return `esdb://127.0.0.1:${this.port}?tls=false`;
  }

  get events(): ReadonlyArray<StoredEvent> {
    return this.log.all;
  }

  /** Appends as "another client" would, without expectations; JSON data unless contentType says otherwise. */
  appendDirect(stream: string, events: readonly DirectEvent[]): { revision: number; commit: bigint } {
    const proposed = events.map((e): Proposed => {
      const contentType = e.contentType ?? 'application/json';
      const data = Buffer.isBuffer(e.data) ? e.data : Buffer.from(JSON.stringify(e.data ?? {}), 'utf8');
      return { id: e.id ?? randomUUID(), metadata: { type: e.type, 'content-type': contentType }, data, customMetadata: Buffer.alloc(0) };
    });
    const outcome = this.log.append(stream, { kind: 'any' }, proposed);
    if (!outcome.ok) throw new Error('appendDirect: the append was refused');
    this.notifySubscribers();
    return { revision: outcome.revision, commit: outcome.position?.commit ?? -1n };
  }

  /**
   * Ends every open subscription from the server side. 'end' closes the call
   * with status OK (the client's subscription just ends, as when EventStoreDB
   * drops a slow consumer); 'error' closes it with UNAVAILABLE (the client's
   * subscription emits an UnavailableError).
   */
  dropSubscriptions(how: 'end' | 'error' = 'end'): void {
    for (const s of this.subscribers) {
      if (how === 'end') s.end();
      else s.fail(unavailable('Subscription dropped by the server'));
    }
    this.subscribers.clear();
  }

  /** Fails every open call with UNAVAILABLE and shuts the gRPC server down; connections are refused until resume(). */
  async pause(): Promise<void> {
    for (const call of this.active) call.fail(unavailable('Server is shutting down'));
    this.active.clear();
    this.subscribers.clear();
    await this.shutdown();
  }

  /** Listens again on the same port, with the same log. */
  async resume(): Promise<void> {
    if (this.server) return;
    await this.listen();
  }

  async stop(): Promise<void> {
    for (const call of this.active) call.fail(unavailable('Server stopped'));
    this.active.clear();
    this.subscribers.clear();
    await this.shutdown();
  }

  private async listen(): Promise<void> {
    const server = new grpc.Server();
    server.addService(featuresGrpc.ServerFeaturesService, { getSupportedMethods: this.getSupportedMethods });
    server.addService(streamsGrpc.StreamsService, this.streamsHandlers());
    const bound = await new Promise<number>((resolve, reject) =>
      server.bindAsync(`127.0.0.1:${this.boundPort}`, grpc.ServerCredentials.createInsecure(), (error, p) =>
        error ? reject(error) : resolve(p),
      ),
    );
    this.server = server;
    this.boundPort = bound;
  }

  /** Graceful shutdown once the calls are ended (so their UNAVAILABLE status reaches the client), forced after a grace period. */
  private async shutdown(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        server.forceShutdown();
        resolve();
      }, 500);
      server.tryShutdown(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private track(call: ActiveCall, until: EventEmitter): void {
    this.active.add(call);
    const forget = () => this.active.delete(call);
    until.on('cancelled', forget);
    until.on('close', forget);
    until.on('finish', forget);
  }

  private notifySubscribers(): void {
    for (const s of this.subscribers) {
      if (s.open) void s.pump();
      else this.subscribers.delete(s);
    }
  }

  // ------------------------------------------------ ServerFeatures

  private readonly getSupportedMethods: grpc.handleUnaryCall<SharedPb.Empty, ServerFeaturesPb.SupportedMethods> = (
    _call,
    callback,
  ) => {
    const service = 'event_store.client.streams.Streams';
    const names = ['Read', 'Append', ...(this.options.batchAppend ? ['BatchAppend'] : [])];
    const methods = names.map((name) => new featuresPb.SupportedMethod().setServiceName(service).setMethodName(name));
    callback(null, new featuresPb.SupportedMethods().setMethodsList(methods).setEventStoreServerVersion(SERVER_VERSION));
  };

  // ------------------------------------------------ Streams

  private streamsHandlers(): grpc.UntypedServiceImplementation {
    const handlers: Partial<StreamsGrpcPb.IStreamsServer> = {
      read: (call) => this.read(call),
      append: (call, callback) => this.appendCall(call, callback),
    };
    // Without a handler grpc-js answers UNIMPLEMENTED, as a server without the method would.
    if (this.options.batchAppend) handlers.batchAppend = (call) => this.batchAppendCall(call);
    return handlers as grpc.UntypedServiceImplementation;
  }

  /** Streams.Append: an Options message, then the proposed events, answered when the client ends its stream. */
  private appendCall(call: grpc.ServerReadableStream<AppendReq, AppendResp>, callback: grpc.sendUnaryData<AppendResp>): void {
    let options: StreamsPb.AppendReq.Options | undefined;
    const proposed: Proposed[] = [];
    let answered = false;
    const answer = (error: Partial<grpc.StatusObject> | null, resp?: AppendResp) => {
      if (answered) return;
      answered = true;
      if (error) callback(error as grpc.ServiceError);
      else callback(null, resp);
    };
    this.track({ fail: (status) => answer(status) }, call);
    call.on('data', (req: AppendReq) => {
      if (req.hasOptions()) options = req.getOptions();
      else if (req.hasProposedMessage()) proposed.push(proposedFrom(req.getProposedMessage()!));
    });
    call.on('error', () => answer({ code: grpc.status.CANCELLED, details: 'Cancelled' }));
    call.on('end', () => {
      if (!options) return answer({ code: grpc.status.INVALID_ARGUMENT, details: 'Append without options' });
      if (missingRequiredMetadata(proposed)) {
        return answer(esdbError(grpc.status.INVALID_ARGUMENT, 'missing-required-metadata-property', 'type and content-type are required'));
      }
      answer(null, this.appendResponse(options, proposed));
    });
  }

  private appendResponse(options: StreamsPb.AppendReq.Options, proposed: readonly Proposed[]): AppendResp {
    const stream = utf8(options.getStreamIdentifier()?.getStreamName() ?? '');
    const expected: Expected = options.hasRevision()
      ? { kind: 'revision', revision: Number(options.getRevision()) }
      : options.hasNoStream()
        ? { kind: 'no_stream' }
        : options.hasStreamExists()
          ? { kind: 'stream_exists' }
          : { kind: 'any' };
    const outcome = this.log.append(stream, expected, proposed);
    this.notifySubscribers();
    const resp = new streamsPb.AppendResp();
    if (!outcome.ok) return resp.setWrongExpectedVersion(appendWrongExpectedVersion(expected, outcome.current));
    const success = new streamsPb.AppendResp.Success();
    if (outcome.revision < 0) success.setNoStream(empty());
    else success.setCurrentRevision(String(outcome.revision));
    if (outcome.position) {
      success.setPosition(
        new streamsPb.AppendResp.Position()
          .setCommitPosition(outcome.position.commit.toString())
          .setPreparePosition(outcome.position.prepare.toString()),
      );
    } else success.setNoPosition(empty());
    return resp.setSuccess(success);
  }

  /**
   * Streams.BatchAppend: a long-lived duplex call the client shares between
   * appends; each append is a correlation id with Options, proposed messages
   * (possibly over several requests) and is_final, answered by one response.
   */
  private batchAppendCall(call: grpc.ServerDuplexStream<BatchAppendReq, BatchAppendResp>): void {
    const pending = new Map<string, { options?: StreamsPb.BatchAppendReq.Options; proposed: Proposed[] }>();
    const open = () => !(call.cancelled || call.writableEnded || call.destroyed);
    this.track({ fail: (status) => open() && call.emit('error', status) }, call);
    call.on('data', (req: BatchAppendReq) => {
      const correlation = parseUuid(req.getCorrelationId());
      const batch = pending.get(correlation) ?? { proposed: [] };
      pending.set(correlation, batch);
      if (req.hasOptions()) batch.options = req.getOptions();
      batch.proposed.push(...req.getProposedMessagesList().map(proposedFrom));
      if (!req.getIsFinal()) return;
      pending.delete(correlation);
      if (open()) call.write(this.batchAppendResponse(req.getCorrelationId()!, batch.options, batch.proposed));
    });
    call.on('end', () => open() && call.end());
    call.on('error', () => undefined);
  }

  private batchAppendResponse(
    correlationId: SharedPb.UUID,
    options: StreamsPb.BatchAppendReq.Options | undefined,
    proposed: readonly Proposed[],
  ): BatchAppendResp {
    const resp = new streamsPb.BatchAppendResp().setCorrelationId(correlationId);
    if (!options) return resp.setError(rpcStatus(grpc.status.INVALID_ARGUMENT, 'BatchAppend without options'));
    const stream = utf8(options.getStreamIdentifier()?.getStreamName() ?? '');
    resp.setStreamIdentifier(streamIdentifier(stream));
    const expected: Expected = options.hasStreamPosition()
      ? { kind: 'revision', revision: Number(options.getStreamPosition()) }
      : options.hasNoStream()
        ? { kind: 'no_stream' }
        : options.hasStreamExists()
          ? { kind: 'stream_exists' }
          : { kind: 'any' };
    echoExpected(resp, expected);
    if (missingRequiredMetadata(proposed)) return resp.setError(rpcStatus(grpc.status.INVALID_ARGUMENT, 'type and content-type are required'));
    const outcome = this.log.append(stream, expected, proposed);
    this.notifySubscribers();
    if (!outcome.ok) return resp.setError(batchWrongExpectedVersion(expected, outcome.current));
    const success = new streamsPb.BatchAppendResp.Success();
    if (outcome.revision < 0) success.setNoStream(new anyEmpty());
    else success.setCurrentRevision(String(outcome.revision));
    if (outcome.position) {
      success.setPosition(
        new sharedPb.AllStreamPosition()
          .setCommitPosition(outcome.position.commit.toString())
          .setPreparePosition(outcome.position.prepare.toString()),
      );
    } else success.setNoPosition(new anyEmpty());
    return resp.setSuccess(success);
  }

  /** Streams.Read: a stream or $all read, or a catch-up subscription to either. */
  private read(call: grpc.ServerWritableStream<ReadReq, ReadResp>): void {
    const options = call.request.getOptions();
    if (!options || !(options.hasStream() || options.hasAll())) {
      call.emit('error', { code: grpc.status.INVALID_ARGUMENT, details: 'Read without stream or $all options' });
      return;
    }
    if (options.hasStream() && options.hasFilter()) {
      call.emit('error', { code: grpc.status.UNIMPLEMENTED, details: 'Filters apply to $all only' });
      return;
    }
    const structuredIds = options.getUuidOption()?.hasStructured() ?? false;
    try {
      if (options.hasSubscription()) return this.subscribe(call, options, structuredIds);
      this.track({ fail: (status) => call.emit('error', status) }, call);
      void this.sendAll(call, this.readMessages(options, structuredIds));
    } catch (error) {
      // A filter's regular expression that does not compile.
      call.emit('error', { code: grpc.status.INVALID_ARGUMENT, details: error instanceof Error ? error.message : String(error) });
    }
  }

  /** The read's answer is computed at once (a snapshot of the log), then sent with backpressure. */
  private async sendAll(call: grpc.ServerWritableStream<ReadReq, ReadResp>, messages: readonly ReadResp[]): Promise<void> {
    for (const message of messages) if (!(await send(call, message))) return;
    if (!call.cancelled && !call.writableEnded) call.end();
  }

  /** The responses of a one-shot read, in order. */
  private readMessages(options: ReadOptions, structuredIds: boolean): ReadResp[] {
    const count = readCount(options);
    const backwards = options.getReadDirection() === 1;
    if (options.hasStream()) {
      const name = utf8(options.getStream()!.getStreamIdentifier()?.getStreamName() ?? '');
      const events = this.log.stream(name);
      if (!events) {
        const notFound = new streamsPb.ReadResp.StreamNotFound().setStreamIdentifier(streamIdentifier(name));
        return [new streamsPb.ReadResp().setStreamNotFound(notFound)];
      }
      return streamSlice(events, options.getStream()!, backwards, count).map((e) => eventResp(e, false, structuredIds));
    }
    const filter = options.hasFilter() ? filterFrom(options.getFilter()!) : undefined;
    return allSlice(this.log.all, options.getAll()!, backwards, count, filter?.matches).map((e) => eventResp(e, true, structuredIds));
  }

  private subscribe(call: grpc.ServerWritableStream<ReadReq, ReadResp>, options: ReadOptions, structuredIds: boolean): void {
    let subscriber: Subscriber;
    if (options.hasStream()) {
      const streamOptions = options.getStream()!;
      const name = utf8(streamOptions.getStreamIdentifier()?.getStreamName() ?? '');
      const source = () => this.log.stream(name) ?? [];
      // From a revision: the events after it (a subscription resumes after the last event it saw).
      const cursor = streamOptions.hasRevision()
        ? Number(streamOptions.getRevision()) + 1
        : streamOptions.hasEnd()
          ? source().length
          : 0;
      subscriber = new Subscriber(call, source, cursor, false, undefined, structuredIds);
    } else {
      const all = options.getAll()!;
      const source = () => this.log.all;
      const cursor = all.hasPosition()
        ? indexOfPosition(source(), BigInt(all.getPosition()!.getCommitPosition()), true)
        : all.hasEnd()
          ? source().length
          : 0;
      const filter = options.hasFilter() ? filterFrom(options.getFilter()!) : undefined;
      subscriber = new Subscriber(call, source, cursor, true, filter, structuredIds);
    }
    this.subscribers.add(subscriber);
    this.track(subscriber, call);
    const forget = () => this.subscribers.delete(subscriber);
    call.on('cancelled', forget);
    call.on('finish', forget);
    void subscriber.start();
  }
}

/** BatchAppend responses repeat the expectation of the request. */
function echoExpected(resp: BatchAppendResp, expected: Expected): void {
  switch (expected.kind) {
    case 'revision':
      resp.setStreamPosition(String(expected.revision));
      break;
    case 'no_stream':
      resp.setNoStream(new anyEmpty());
      break;
    case 'stream_exists':
      resp.setStreamExists(new anyEmpty());
      break;
    case 'any':
      resp.setAny(new anyEmpty());
      break;
  }
}

function appendWrongExpectedVersion(expected: Expected, current: number): StreamsPb.AppendResp.WrongExpectedVersion {
  const wev = new streamsPb.AppendResp.WrongExpectedVersion();
  if (current >= 0) wev.setCurrentRevision(String(current));
  else wev.setCurrentNoStream(empty());
  switch (expected.kind) {
    case 'revision':
      return wev.setExpectedRevision(String(expected.revision));
    case 'no_stream':
      return wev.setExpectedNoStream(empty());
    case 'stream_exists':
      return wev.setExpectedStreamExists(empty());
    case 'any':
      return wev.setExpectedAny(empty());
  }
}

/** BatchAppend reports errors as a google.rpc.Status whose details pack the EventStoreDB error message. */
function batchWrongExpectedVersion(expected: Expected, current: number): StatusPb.Status {
  const wev = new sharedPb.WrongExpectedVersion();
  if (current >= 0) wev.setCurrentStreamRevision(String(current));
  else wev.setCurrentNoStream(new anyEmpty());
  if (expected.kind === 'revision') wev.setExpectedStreamPosition(String(expected.revision));
  else if (expected.kind === 'no_stream') wev.setExpectedNoStream(new anyEmpty());
  else if (expected.kind === 'stream_exists') wev.setExpectedStreamExists(new anyEmpty());
  else wev.setExpectedAny(new anyEmpty());
  const details = new anyPb.Any();
  details.pack(wev.serializeBinary(), 'event_store.client.WrongExpectedVersion');
  return rpcStatus(grpc.status.FAILED_PRECONDITION, 'Wrong expected version').setDetails(details);
}

function rpcStatus(code: grpc.status, message: string): StatusPb.Status {
  // google.rpc.Code and grpc-js's status enumerate the same codes.
  return new statusPb.Status().setCode(code as number as CodePb.Code).setMessage(message);
}

function streamSlice(
  events: readonly StoredEvent[],
  options: StreamsPb.ReadReq.Options.StreamOptions,
  backwards: boolean,
  count: number,
): StoredEvent[] {
  if (backwards) {
    const from = options.hasRevision() ? Number(options.getRevision()) : options.hasStart() ? -1 : events.length - 1;
    return events.slice(0, Math.min(from, events.length - 1) + 1).reverse().slice(0, count);
  }
  const from = options.hasRevision() ? Number(options.getRevision()) : options.hasEnd() ? events.length : 0;
  return events.slice(from, from + count);
}

/** Forwards from a position includes the event at it; backwards from a position gives the events before it. */
function allSlice(
  log: readonly StoredEvent[],
  options: StreamsPb.ReadReq.Options.AllOptions,
  backwards: boolean,
  count: number,
  matches: EventFilter = () => true,
): StoredEvent[] {
  const position = options.hasPosition() ? BigInt(options.getPosition()!.getCommitPosition()) : undefined;
  let candidates: StoredEvent[];
  if (backwards) {
    const end = position !== undefined ? indexOfPosition(log, position, false) : options.hasStart() ? 0 : log.length;
    candidates = log.slice(0, end).reverse();
  } else {
    const start = position !== undefined ? indexOfPosition(log, position, false) : options.hasEnd() ? log.length : 0;
    candidates = log.slice(start);
  }
  const out: StoredEvent[] = [];
  for (const e of candidates) {
    if (out.length >= count) break;
    if (matches(e)) out.push(e);
  }
  return out;
}
