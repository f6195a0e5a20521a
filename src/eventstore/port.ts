/**
 * The event store port. The embedded LMDB log and the EventStoreDB adapter
 * both implement it, and both run the same contract suite
 * (test/eventstore-contract.ts).
 */
import type { Shapes } from './packed-data.js';

/** A global position in the log. EventStoreDB has two parts; the embedded log uses one number for both. */
export interface Position {
  readonly commit: bigint;
  readonly prepare: bigint;
}

export const startOfLog: Position = { commit: -1n, prepare: -1n };

/** The embedded log's number for the event at `position`: its events are 1, 2, …, and startOfLog is 0 (none). */
export function eventNumber(position: Position): number {
  return position.commit < 0n ? 0 : Number(position.commit);
}

export function comparePositions(a: Position, b: Position): number {
  if (a.commit !== b.commit) return a.commit < b.commit ? -1 : 1;
  if (a.prepare !== b.prepare) return a.prepare < b.prepare ? -1 : 1;
  return 0;
}

/** `any`: no check; `no_stream`: must not exist; `stream_exists`: must exist; a number: the stream's last revision (0-based). */
export type ExpectedRevision = 'any' | 'no_stream' | 'stream_exists' | number;

export interface EventToAppend {
  /** Event id (UUID). Appending an id its stream already holds appends nothing for it (as on EventStoreDB). */
  readonly id: string;
  readonly type: string;
  readonly data: unknown;
}

export interface RecordedEvent {
  readonly id: string;
  readonly type: string;
  readonly stream: string;
  /** 0-based revision within the stream. */
  readonly revision: number;
  readonly position: Position;
  readonly data: unknown;
  /**
   * Why the event is not one of ours after all: set by a store whose other
   * writers it cannot vouch for (EventStoreDB) when an event of a catalog
   * type fails its schema. Such an event keeps its place in the log (and
   * its stream's revision) but means nothing: it is folded as nothing.
   */
  readonly invalid?: string;
}

export interface AppendResult {
  /** The stream's last revision after the append. */
  readonly nextRevision: number;
  /** Position of the last event of the append (or of the events it repeated). */
  readonly position: Position;
}

export interface StreamAppend {
  readonly stream: string;
  readonly events: readonly EventToAppend[];
  readonly expectedRevision?: ExpectedRevision;
  /** The stream's last revision as of `AppendManyOptions.asOf` (-1: no stream), when the caller knows it. */
  readonly knownRevision?: number;
}

export interface AppendManyOptions {
  /**
   * The log's head as the caller last saw it, with every append's `knownRevision` exact as of it and none of its
   * event ids in its stream then (an import that has read the whole log knows every stream and every id). While the
   * head is still there, nothing else has been appended since: a store may take those revisions, and skip looking
   * for the ids, instead of looking each stream up.
   */
  readonly asOf?: Position;
  /**
   * When the known revisions are taken: the store may put off writing what finds the events by stream (the
   * embedded log's stream entries) until `indexStreams`, for an import that has the log to itself. Every read or
   * append of the store still sees the events by stream meanwhile, only slower.
   */
  readonly deferStreamEntries?: boolean;
}

export interface AppendManyResult {
  /** Position of the last event of the appends (or of the events they repeated); undefined when there were none. */
  readonly position: Position | undefined;
  /**
   * The head was `asOf` and the known revisions were taken: each append's events are at the revisions after its
   * `knownRevision`, and the caller's knowledge holds as of `position`. Otherwise the caller knows nothing new.
   */
  readonly tookKnown: boolean;
}

/** Events made ahead into the bytes the embedded log stores (stored-event.ts): `values` holds one after another, each ending at its `ends`. */
export interface PreparedEvents {
  readonly values: Uint8Array;
  readonly ends: Uint32Array;
}

/** The `i`th of byte strings written one after another, each ending at its `ends` (PreparedEvents, KeyedPositions). */
export function nthBytes(bytes: Uint8Array, ends: Uint32Array, i: number): Uint8Array {
  return bytes.subarray(nthStart(ends, i), ends[i]);
}

/** Where the `i`th of those byte strings starts. */
export function nthStart(ends: Uint32Array, i: number): number {
  return i === 0 ? 0 : ends[i - 1]!;
}

/** Keys already in a table's key bytes, one after another (each ending at its `ends`), with the position each names. */
export interface KeyedPositions {
  readonly keys: Uint8Array;
  readonly ends: Uint32Array;
  readonly positions: Float64Array;
}

/**
 * A slice of the stream entries of prepared events at positions `from` through `through`, in the order of their keys:
 * `streams` (stream and revision; `exact`: each key after the one before, in every slice) and `ids` (stream and id,
 * of every event past a stream's first, ordered by stream and revision). `last`: the last slice.
 */
export interface PreparedEntries {
  readonly from: number;
  readonly through: number;
  readonly last: boolean;
  readonly streams: KeyedPositions & { readonly exact: boolean };
  readonly ids: KeyedPositions;
}

/** What prepared events were made over: the log's head they follow, and the shapes and record id their bytes use. */
export interface PreparedOver {
  readonly asOf: Position;
  readonly shapes: Shapes;
  readonly envelope: number;
}

export class WrongExpectedRevisionError extends Error {
  constructor(
    readonly stream: string,
    readonly expected: ExpectedRevision,
    readonly actual: number | 'no_stream',
  ) {
    super(`stream ${stream}: expected revision ${String(expected)}, actual ${String(actual)}`);
    this.name = 'WrongExpectedRevisionError';
  }
}

/** The store cannot be reached right now (a retry later may succeed). */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}

export interface SubscriptionHandler {
  /** A batch of events in log order; the next batch comes once this resolves. */
  onEvents(events: readonly RecordedEvent[]): Promise<void>;
  /** The log was read to its end (called after each catch-up). */
  onCaughtUp?(head: Position): void;
  /** The position moved across events that are not ours (filtered out). */
  onCheckpoint?(position: Position): Promise<void>;
  /** The subscription is reconnecting after a failure. */
  onError?(error: unknown): void;
  /** The log's last position as the store saw it on (re)subscribing. */
  onHead?(head: Position): void;
}

export interface Subscription {
  close(): Promise<void>;
}

export interface EventStore {
  readonly kind: string;
  append(stream: string, events: readonly EventToAppend[], expectedRevision?: ExpectedRevision): Promise<AppendResult>;
  /**
   * Append to several streams. The embedded log does it in one transaction;
   * other adapters append stream by stream.
   */
  appendMany(appends: Iterable<StreamAppend>, options?: AppendManyOptions): Promise<AppendManyResult>;
  /**
   * The events of one stream in revision order, from `fromRevision` (0 by default), at most `maxCount` of them (all by
   * default); empty when the stream does not exist.
   */
  readStream(stream: string, fromRevision?: number, maxCount?: number): Promise<RecordedEvent[]>;
  /** Up to `maxCount` events after `from` (exclusive), in log order. */
  readAll(from: Position, maxCount: number): Promise<RecordedEvent[]>;
  /** The position of the last event in the log, or startOfLog. */
  head(): Promise<Position>;
  /** Catch up from `from` (exclusive), then follow new events, also those appended by other processes. */
  subscribe(from: Position, handler: SubscriptionHandler): Subscription;
  /** Let go of memory that holds what was read, if the store keeps any (the embedded log: its mapped pages). */
  releaseReadPages?(): Promise<void>;
  /** Write what appends with `deferStreamEntries` put off (`onSlice` told of the entries written so far now and then). */
  indexStreams?(onSlice?: (written: number) => void): Promise<void>;
  /**
   * Append events made ahead (an import's, alone with the embedded log), their stream entries put off until
   * `indexPrepared` (or `indexStreams`, which reads them from the log): only while the head is `asOf` and the log's
   * shapes give the stored event `envelope`; else nothing is appended, and `tookKnown` is false.
   */
  appendPrepared?(events: PreparedEvents, over: PreparedOver): Promise<AppendManyResult>;
  /** Write a slice of the stream entries of events `appendPrepared` appended; with the last, any others that lag. */
  indexPrepared?(entries: PreparedEntries): Promise<void>;
  /** Whether another process has the log open now (the embedded log: LMDB's reader table), when the store can tell. */
  openElsewhere?(): boolean;
  /**
   * A store that takes events' data packed ahead of the append (PackedData, see packed-data.ts: the embedded log)
   * tells the shapes its log holds now; an appended event's `data` may then be PackedData over them or more.
   */
  shapes?(): Promise<Shapes>;
  close(): Promise<void>;
}
