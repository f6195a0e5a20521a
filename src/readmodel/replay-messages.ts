/** What `vm-api rebuild` and its replay workers send each other (structured clones: positions stay bigints). */
import type { Config } from '../config.js';
import type { Kind } from '../../projections/records.js';
import type { Position } from '../eventstore/port.js';
import type { FeedEntry } from './change-feed.js';

export interface ReplayTask {
  config: Pick<Config, 'DATA_DIR' | 'EVENTSTORE_URL'>;
  /** Replay up to this position. */
  head: Position;
  /** Institution → worker, as `assignInstitutions` made it. */
  assignment: [string, number][];
  workers: number;
  /** This worker. */
  index: number;
  /** Events read between two releases of the log's pages (0: none; see `ReplayReleasing`). */
  releaseEvery: number;
}

/**
 * Sent by a replay worker each time it has read another `releaseEvery` events: it has closed the log, and opens it
 * again once told (`REPLAY_REOPEN`). Every worker reads the same events, so each comes to the same releases; once
 * all have closed it, the parent lets go of the log's pages (the threads share them: they go only while every one
 * has the log closed).
 */
export interface ReplayReleasing {
  readonly releasing: number;
}

/** Sent by the parent to every replay worker once the log's pages are let go of: open the log again, read on. */
export const REPLAY_REOPEN = 'reopen';

/** A place in one of a result's buffers. */
interface Place {
  buffer: number;
  offset: number;
  length: number;
}

/** An encoded snapshot as places in buffers. */
interface PackedSnapshot {
  tables: ({ kind: Kind; institution: string } & Place)[];
  chunks: ({ kind: Kind; records: number } & Place)[];
}

/** Sent by a replay worker now and then while it replays: the events it has read so far (of every institution). */
export interface ReplayProgress {
  readonly read: number;
}

/** Sent by a replay worker as it replays: change feed entries of its institutions, in log order. */
export interface ReplayFeed {
  readonly feed: readonly FeedEntry[];
}

/**
 * Sent by a replay worker once it has replayed: its snapshot, a table or a chunk at a time, in memory of its own
 * (transferred, not copied). The next comes once the parent has written this one and said so (`ReplayMore`).
 */
export type ReplayPiece =
  | { readonly table: { readonly kind: Kind; readonly institution: string }; readonly buffer: ArrayBuffer }
  | { readonly chunk: { readonly kind: Kind; readonly records: number }; readonly buffer: ArrayBuffer };

/** Sent by the parent to a replay worker: the piece it sent is written, send the next. */
export const REPLAY_MORE = 'more';

/** Sent by a replay worker last, once every piece of its snapshot is written. */
export interface ReplayResult {
  readonly position: Position;
  readonly applied: number;
}

/** A piece's buffer in an ArrayBuffer of its own, to be transferred (msgpackr packs many pieces into one of its own). */
export function ownBuffer(view: Buffer): ArrayBuffer {
  const own = new ArrayBuffer(view.length);
  new Uint8Array(own).set(view);
  return own;
}
