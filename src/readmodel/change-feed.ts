/**
 * The change feed: for each institution, the events of the log that
 * changed a record a client reads, in log order, each named by its log
 * position (the cursor clients page with: stable across restarts,
 * rebuilds and replicas, since it is the log's own).
 *
 * The fold tells it of each entry as the model changes; the entries are
 * written to LMDB with the journal and checkpoint of their batch (see
 * persistence.ts), and until that write lands they are kept here, so the
 * feed shows what the model shows, no later.
 */
import type { EventType } from '../events/catalog.js';
import { type FeedResource, resourceOfType } from '../events/subjects.js';
import { formatTimestamp } from '../time.js';

export interface FeedEntry {
  readonly institution: string;
  /** The event's log position (numbers: keys in LMDB; positions stay below 2^53). */
  readonly commit: number;
  readonly prepare: number;
  readonly type: EventType;
  /** The record the event is about (a UUID, as the catalog has every id). */
  readonly id: string;
  /** When it occurred, in microseconds. */
  readonly occurredAt: number;
}

/** A place in the log, as a cursor points at it. */
export interface FeedPosition {
  readonly commit: number;
  readonly prepare: number;
}

/** The change feed's entries on disk (ReadModelStore implements it). */
export interface FeedStore {
  /** Up to `limit` entries of an institution after `after` (from the start if undefined), in log order. */
  feedAfter(institution: string, after: FeedPosition | undefined, limit: number): FeedEntry[];
}

interface FeedItem {
  cursor: string;
  type: EventType;
  resource: FeedResource;
  id: string;
  occurred_at: string;
}

const CURSOR = /^(\d{1,16})\.(\d{1,16})$/;

/** The cursor of a position: opaque to clients (base64url of the position). */
export function encodeCursor({ commit, prepare }: FeedPosition): string {
  return Buffer.from(`${commit}.${prepare}`, 'latin1').toString('base64url');
}

/** The position a cursor points at, or undefined when it is not one this feed made. */
export function decodeCursor(cursor: string): FeedPosition | undefined {
  if (!/^[A-Za-z0-9_-]{1,48}$/.test(cursor)) return undefined;
  const match = CURSOR.exec(Buffer.from(cursor, 'base64url').toString('latin1'));
  if (!match) return undefined;
  const commit = Number(match[1]);
  const prepare = Number(match[2]);
  return Number.isSafeInteger(commit) && Number.isSafeInteger(prepare) ? { commit, prepare } : undefined;
}

const after = (entry: FeedPosition, position: FeedPosition | undefined) =>
  position === undefined || entry.commit > position.commit || (entry.commit === position.commit && entry.prepare > position.prepare);

export class ChangeFeed {
  /** Entries folded whose write to disk has not landed yet, in log order. */
  private pending: FeedEntry[] = [];

  constructor(private readonly disk: FeedStore) {}

  /** Entries just folded (the model shows them now). */
  folded(entries: readonly FeedEntry[]): void {
    for (const entry of entries) this.pending.push(entry);
  }

  /** The entries up to this position are on disk. */
  persisted(upTo: FeedPosition): void {
    const kept = this.pending.findIndex((entry) => after(entry, upTo));
    this.pending = kept < 0 ? [] : this.pending.slice(kept);
  }

  /** A page of an institution's feed after a position (the start if undefined). */
  page(institution: string, from: FeedPosition | undefined, limit: number): FeedItem[] {
    // Pending entries are all after those on disk; a write that landed while this reads may show an entry in both.
    const entries = this.disk.feedAfter(institution, from, limit);
    let last = entries.length > 0 ? entries[entries.length - 1] : from;
    for (const entry of this.pending) {
      if (entries.length >= limit) break;
      if (entry.institution !== institution || !after(entry, last)) continue;
      entries.push(entry);
      last = entry;
    }
    return entries.map((entry) => ({
      cursor: encodeCursor(entry),
      type: entry.type,
      resource: resourceOfType(entry.type)!,
      id: entry.id,
      occurred_at: formatTimestamp(entry.occurredAt),
    }));
  }
}

/** Feed entries written in batches as a replay makes them, one write at a time (see ReadModelStore.appendFeed). */
export class FeedWriter {
  private batch: FeedEntry[] = [];
  private writing: Promise<void> = Promise.resolve();
  private failure: { error: unknown } | undefined;

  constructor(
    private readonly write: (entries: readonly FeedEntry[]) => Promise<void>,
    private readonly batchSize = 10_000,
  ) {}

  readonly add = (entry: FeedEntry): void => {
    this.batch.push(entry);
    if (this.batch.length >= this.batchSize) this.flush();
  };

  /** Write these entries after those before (a batch made elsewhere). */
  addBatch(entries: readonly FeedEntry[]): void {
    this.flush();
    this.enqueue(entries);
  }

  private flush(): void {
    if (this.batch.length === 0) return;
    const batch = this.batch;
    this.batch = [];
    this.enqueue(batch);
  }

  private enqueue(entries: readonly FeedEntry[]): void {
    // After a failed write nothing more is written; done() throws its error.
    this.writing = this.writing.then(async () => {
      if (this.failure) return;
      await this.write(entries).catch((error: unknown) => (this.failure = { error }));
    });
  }

  /** Write what is left and wait for every write. */
  async done(): Promise<void> {
    this.flush();
    await this.writing;
    if (this.failure) throw this.failure.error;
  }
}
