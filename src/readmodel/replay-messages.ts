/** What `vm-api rebuild` and its replay workers send each other (structured clones: positions stay bigints). */
import type { Kind } from '../../projections/records.js';
import type { Position } from '../eventstore/port.js';
import type { FeedEntry } from './change-feed.js';
import type { FoldedEvent } from './folder.js';

export interface ReplayTask {
  /** Institution → worker, as `assignInstitutions` made it. */
  assignment: [string, number][];
  workers: number;
  /** This worker. */
  index: number;
}

/**
 * Sent by the parent: the next events of the log for this worker, in log order — those of its institutions, and
 * every institution's issued keys (a key's uniqueness is judged across institutions, see EventFolder).
 */
export interface ReplayEvents {
  readonly events: readonly FoldedEvent[];
}

/** Sent by the parent once the log is read: the position the replay reached (every worker's, whatever it was sent). */
export interface ReplayEnd {
  readonly end: Position;
}

/** Sent by a replay worker after each batch of events it has folded (the parent sends a few batches ahead, no more). */
export interface ReplayFolded {
  readonly folded: true;
}

/** Sent by a replay worker as it replays: change feed entries of its institutions, in log order. */
export interface ReplayFeed {
  readonly feed: readonly FeedEntry[];
}

/**
 * Sent by a replay worker once it has replayed: its snapshot, a table or a chunk at a time, each in memory of its own
 * (`buffer.buffer`, transferred, not copied). The next comes once the parent has written this one and said so
 * (`REPLAY_MORE`).
 */
export type ReplayPiece =
  | { readonly table: { readonly kind: Kind; readonly institution: string }; readonly buffer: Uint8Array<ArrayBuffer> }
  | { readonly chunk: { readonly kind: Kind; readonly records: number }; readonly buffer: Uint8Array<ArrayBuffer> };

/** Sent by the parent to a replay worker: the piece it sent is written, send the next. */
export const REPLAY_MORE = 'more';

/** Sent by a replay worker last, once every piece of its snapshot is written. */
export interface ReplayResult {
  readonly position: Position;
  readonly applied: number;
}

/** A piece's bytes copied into memory of their own, to be transferred (msgpackr packs many pieces into one buffer). */
export function ownBuffer(view: Uint8Array): Uint8Array<ArrayBuffer> {
  return new Uint8Array(view);
}
