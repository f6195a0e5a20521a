/** What `vm-api rebuild` and its replay workers send each other (structured clones: positions stay bigints). */
import type { Config } from '../config.js';
import type { Kind } from '../../projections/records.js';
import type { Position } from '../eventstore/port.js';
import type { FeedEntry } from './change-feed.js';
import type { EncodedSnapshot } from './persistence.js';

export interface ReplayTask {
  config: Pick<Config, 'DATA_DIR' | 'EVENTSTORE_URL'>;
  /** Replay up to this position. */
  head: Position;
  /** Institution → worker, as `assignInstitutions` made it. */
  assignment: [string, number][];
  workers: number;
  /** This worker. */
  index: number;
}

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

export interface ReplayResult {
  position: Position;
  applied: number;
  snapshot: PackedSnapshot;
  /** The memory the chunks and tables are in (transferred, not copied). */
  buffers: ArrayBuffer[];
}

/**
 * An encoded snapshot as places in the ArrayBuffers its buffers are views
 * of, to be transferred with it: the encoder's own memory (msgpackr packs
 * into buffers of their own, never Node's shared pool), so nothing is copied.
 */
export function packSnapshot(encoded: EncodedSnapshot): { buffers: ArrayBuffer[]; snapshot: PackedSnapshot } {
  const buffers: ArrayBuffer[] = [];
  const numbers = new Map<ArrayBufferLike, number>();
  const place = (view: Buffer): Place => {
    let buffer = numbers.get(view.buffer);
    if (buffer === undefined) {
      buffer = buffers.push(view.buffer as ArrayBuffer) - 1;
      numbers.set(view.buffer, buffer);
    }
    return { buffer, offset: view.byteOffset, length: view.length };
  };
  return {
    buffers,
    snapshot: {
      tables: Array.from(encoded.tables, ({ kind, institution, buffer }) => ({ kind, institution, ...place(buffer) })),
      chunks: Array.from(encoded.chunks, ({ kind, buffer, records }) => ({ kind, records, ...place(buffer) })),
    },
  };
}

/** The encoded snapshot a result carries (views into its buffers). */
export function unpackSnapshot({ snapshot, buffers }: ReplayResult): EncodedSnapshot {
  const view = ({ buffer, offset, length }: Place) => Buffer.from(buffers[buffer]!, offset, length);
  return {
    tables: snapshot.tables.map((t) => ({ kind: t.kind, institution: t.institution, buffer: view(t) })),
    chunks: snapshot.chunks.map((c) => ({ kind: c.kind, buffer: view(c), records: c.records })),
  };
}
