/**
 * The projector: follows the log from the read model's checkpoint, folds
 * each batch of events through the projections into the in-memory model,
 * and persists the changed records (to the journal) with the new
 * checkpoint in one LMDB transaction. On start it loads the snapshot, its
 * indexes and the journal from LMDB first, so only the events after the
 * checkpoint are replayed; a replay (`rebuild`) ends with a new snapshot.
 * A long journal is folded into a new snapshot once the model has caught
 * up, in the background: requests go on being answered meanwhile (the
 * snapshot is encoded a slice at a time), while new events wait.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Logger } from 'pino';
import { projections as allProjections } from '../../projections/index.js';
import type { Change, Projection } from '../../projections/projection.js';
import {
  comparePositions,
  type EventStore,
  type Position,
  type RecordedEvent,
  type Subscription,
  startOfLog,
} from '../eventstore/port.js';
import { SLICE_MS } from './background.js';
import { ChangeFeed, type FeedEntry, FeedWriter } from './change-feed.js';
import { EventFolder } from './folder.js';
import type { ReadModel } from './model.js';
import type { ReadModelStore } from './persistence.js';
import { encodeSnapshot } from './persistence.js';
import { eventsUpTo, replay } from './replay.js';

/**
 * A journal of more than a JOURNAL_FOLD_SHARE-th of the snapshot's records is folded: at a start-up a journal's change
 * costs about six times a snapshot's record (667,000 changes over 1.42M records: ready after 14 s instead of 4.4 s),
 * so a fiftieth adds about a tenth to the start-up.
 */
const JOURNAL_FOLD_SHARE = 50;

/** A journal of fewer changes than this is never folded into a snapshot (JOURNAL_FOLD_FROM). */
const JOURNAL_FOLD_FROM = 10_000;

interface Waiter {
  position: Position;
  resolve: () => void;
}

export interface ProjectorStatus {
  position: Position;
  caughtUp: boolean;
  eventsApplied: number;
  lastError: string | undefined;
  /** The subscription failed or ended and is being re-established. */
  reconnecting: boolean;
  reconnects: number;
}

/** How far the read model is behind the log. */
export interface ProjectorLag {
  /** The log's last position, as last seen (asked at most once a second). */
  head: Position;
  /** head − applied position: events for the embedded log, bytes of the transaction log for EventStoreDB. */
  positions: bigint;
  /** How long the read model has been behind that head (0 when level with it). */
  ms: number;
}

/** How often lag() asks the store for its head, and how long it waits for the answer. */
const HEAD_REFRESH_MS = 1000;

export class Projector {
  /** How long the log must go without an event before a journal grown long while serving is folded (tests lower it). */
  static foldQuietMs = 5000;

  private readonly folder: EventFolder;
  /** Each institution's change feed, as the model shows it. */
  readonly changes: ChangeFeed;
  private subscription: Subscription | undefined;
  private waiters: Waiter[] = [];
  private position: Position = startOfLog;
  private caughtUp = false;
  private eventsApplied = 0;
  private lastError: string | undefined;
  private reconnecting = false;
  private reconnects = 0;
  /** The highest head of the log known (from the store, the subscription, or applied events). */
  private head: Position = startOfLog;
  private headAskedAt = -Infinity;
  /** When the read model fell behind the known head (undefined while level with it). */
  private behindSince: number | undefined;
  /** The batch being written to LMDB while the next one is projected (one at a time). */
  private writing: Promise<void> = Promise.resolve();
  /** Set when a write failed: the disk then stays at its last good checkpoint. */
  private persistFailure: unknown;
  /** Whether the journal loaded was long enough to fold into a new snapshot (done once caught up). */
  private foldWanted = false;
  /** When the last batch was applied (performance.now()). */
  private lastBatchAt = -Infinity;
  /** The fold of a journal grown long while serving, waiting for the log to go quiet. */
  private foldTimer: NodeJS.Timeout | undefined;
  /** Set while the journal is being folded: new batches wait for it. */
  private folding: Promise<void> | undefined;

  constructor(
    private readonly store: EventStore,
    private readonly model: ReadModel,
    private readonly disk: ReadModelStore,
    private readonly log?: Logger,
    projections: readonly Projection[] = allProjections,
    private readonly journalFoldFrom = JOURNAL_FOLD_FROM,
  ) {
    this.folder = new EventFolder(model, projections, (event, problem) => this.skipped(event, problem, 'it breaks a rule of the log'));
    this.changes = new ChangeFeed(disk);
  }

  /** An event folded as nothing, logged without its data: it may hold anything, personal data included. */
  private skipped(event: RecordedEvent, problem: string, why: string): void {
    this.log?.warn(
      { position: event.position.commit.toString(), stream: event.stream, type: event.type, id: event.id, problem },
      `event skipped: ${why}`,
    );
  }

  status(): ProjectorStatus {
    return {
      position: this.position,
      caughtUp: this.caughtUp,
      eventsApplied: this.eventsApplied,
      lastError: this.lastError,
      reconnecting: this.reconnecting,
      reconnects: this.reconnects,
    };
  }

  /** How far behind the log the read model is; asks the store for its head at most once a second. */
  async lag(): Promise<ProjectorLag> {
    const now = performance.now();
    if (now - this.headAskedAt >= HEAD_REFRESH_MS) {
      this.headAskedAt = now;
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(resolve, HEAD_REFRESH_MS, undefined)));
      // While the store is unreachable the last known head stands.
      const head = await Promise.race([this.store.head().catch(() => undefined), timeout]);
      clearTimeout(timer);
      if (head) this.noteHead(head);
    }
    const positions = this.behind(this.head);
    // (Level with the head, however it got there: a snapshot loaded moves the position without an event applied.)
    if (positions === 0n) this.behindSince = undefined;
    return {
      head: this.head,
      positions,
      ms: this.behindSince === undefined ? 0 : Math.round(performance.now() - this.behindSince),
    };
  }

  /** How many positions the read model is behind `head` (0 if not). */
  private behind(head: Position): bigint {
    const behind = head.commit - this.position.commit;
    return behind > 0n ? behind : 0n;
  }

  private noteHead(head: Position): void {
    if (comparePositions(head, this.head) > 0) this.head = head;
    if (comparePositions(this.position, this.head) >= 0) this.behindSince = undefined;
    else this.behindSince ??= performance.now();
  }

  /**
   * Load the persisted records (or drop an outdated read model). A journal
   * grown past a fiftieth of the snapshot (and journalFoldFrom changes) is to
   * be folded into a new snapshot, so start-ups stay quick: once caught up
   * (see foldJournal).
   */
  async load(onProgress?: (loaded: number) => void): Promise<void> {
    if (!this.disk.isCurrent()) {
      await this.disk.clear();
      this.position = startOfLog;
      return;
    }
    await this.model.loadPersistedInSlices(this.disk.persisted(), onProgress);
    this.position = this.disk.checkpoint();
    this.foldWanted = this.longJournal(this.disk.sizes());
    // The whole file was just read: let go of its pages.
    await this.disk.reopen();
  }

  private longJournal({ snapshot, journal }: { snapshot: number; journal: number }): boolean {
    return journal >= this.journalFoldFrom && journal * JOURNAL_FOLD_SHARE >= snapshot;
  }

  /**
   * A journal grown long while serving (a live import: a restart would then load the whole journal on top of the
   * snapshot, 14 s after a million events at 1M shifts) is folded too, once the log has gone `foldQuietMs` without
   * an event — not during the import, whose batches would wait for the fold.
   */
  private foldWhenQuiet(): void {
    clearTimeout(this.foldTimer);
    this.foldTimer = setTimeout(() => {
      this.foldTimer = undefined;
      if (this.subscription === undefined) return;
      if (performance.now() - this.lastBatchAt < Projector.foldQuietMs) this.foldWhenQuiet();
      else void this.foldJournal();
    }, Projector.foldQuietMs).unref();
  }

  /**
   * Fold the journal into a new snapshot of the model as it is: new
   * batches wait meanwhile (so the model holds still), the snapshot is
   * encoded and written beside the current one a piece at a time, requests
   * answered between slices, then made current with the checkpoint in one
   * transaction (ReadModelStore.replaceSnapshot). A failure loses only a
   * quicker next start-up: snapshot and journal stay as they were.
   */
  async foldJournal(): Promise<void> {
    if (this.folding) return this.folding;
    let done!: () => void;
    this.folding = new Promise((resolve) => (done = resolve));
    try {
      // Until no write is in flight (a batch begun before the gate may have queued one more).
      for (let writing = this.writing; ; writing = this.writing) {
        await writing;
        if (writing === this.writing) break;
      }
      if (this.persistFailure !== undefined) return;
      const started = performance.now();
      const sizes = this.disk.sizes();
      this.model.flush();
      await this.disk.replaceSnapshot(encodeSnapshot(this.model.byKind(), this.model.tablesToSave(), true), this.position, slices(SLICE_MS));
      this.foldWanted = false;
      this.log?.info(
        { ...sizes, position: this.position.commit.toString(), ms: Math.round(performance.now() - started) },
        'journal folded into a new snapshot of the read model',
      );
    } catch (error) {
      this.log?.warn({ err: error }, 'could not fold the journal into a new snapshot');
    } finally {
      this.folding = undefined;
      done();
    }
  }

  /** Load, catch up with the log, and keep following it. Resolves once caught up. */
  async start(): Promise<void> {
    await this.load();
    await this.follow();
  }

  /** Follow the log from the position loaded: catch up, and keep following it. Resolves once caught up. */
  follow(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.subscription = this.store.subscribe(this.position, {
        onEvents: (events) => {
          this.reconnecting = false;
          return this.applyBatch(events);
        },
        onCheckpoint: async (position) => {
          await this.folding;
          if (comparePositions(position, this.position) > 0) {
            await this.persist([], [], position);
            this.advance(position);
          }
        },
        onHead: (head) => {
          this.noteHead(head);
          if (this.reconnecting) {
            this.log?.info(
              { position: this.position.commit.toString(), head: head.commit.toString(), lag: this.behind(head).toString() },
              'projection resubscribed; catching up from the checkpoint to the head',
            );
          }
        },
        onCaughtUp: () => {
          this.model.catchUp(); // build the indexes now rather than on the first request (or in the background)
          if (this.foldWanted) void this.foldJournal();
          if (this.reconnecting) this.log?.info({ position: this.position.commit.toString() }, 'projection subscription re-established');
          this.reconnecting = false;
          this.caughtUp = true;
          resolve();
        },
        onError: (error) => {
          this.lastError = error instanceof Error ? error.message : String(error);
          this.reconnecting = true;
          this.reconnects += 1;
          this.log?.warn(
            { err: error, position: this.position.commit.toString(), reconnects: this.reconnects },
            'projection subscription lost; resubscribing from the checkpoint',
          );
        },
      });
    });
  }

  /**
   * Replay from the checkpoint up to the current head of the log, then stop
   * (`vm-api rebuild`), and write the model as a snapshot with the
   * checkpoint.
   */
  async catchUp(onRead?: (read: number) => void): Promise<void> {
    await this.writing;
    if (await this.replay(await this.store.head(), onRead)) {
      await this.disk.writeSnapshot(this.model.byKind(), this.model.tablesToSave(), this.position);
    }
  }

  /**
   * Fold the log from the checkpoint up to `head` into the model (see
   * replay.ts), writing nothing. Whether the position moved.
   */
  private async replay(head: Position, onRead?: (read: number) => void): Promise<boolean> {
    const feed = new FeedWriter((entries) => this.disk.appendFeed(entries));
    const { position, applied } = await replay(eventsUpTo(this.store, this.position, head, onRead), this.model, this.folder, this.position, { feed: feed.add });
    await feed.done();
    if (comparePositions(position, this.position) <= 0) return false;
    this.eventsApplied += applied;
    this.advance(position);
    return true;
  }

  /** Resolves once the read model has applied the log up to `position`. */
  waitFor(position: Position): Promise<void> {
    if (comparePositions(this.position, position) >= 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ position, resolve }));
  }

  async stop(): Promise<void> {
    clearTimeout(this.foldTimer);
    this.foldTimer = undefined;
    await this.folding;
    await this.subscription?.close();
    this.subscription = undefined;
    await this.writing;
  }

  async applyBatch(events: readonly RecordedEvent[]): Promise<void> {
    await this.folding;
    for (const event of events) {
      if (event.invalid === undefined || comparePositions(event.position, this.position) <= 0) continue;
      this.skipped(event, event.invalid, 'its data does not match the event catalog');
    }
    const changed = new Map<string, Change>();
    const feed: FeedEntry[] = [];
    const options = { changed, feed: (entry: FeedEntry) => feed.push(entry) };
    // Folded a slice at a time, requests answered between slices (a batch of a live import takes tens of ms);
    // they may see part of the batch, as they may see part of any import. Written and checkpointed as one.
    let last: Position | undefined;
    const pause = slices(SLICE_MS);
    for (let from = 0; from < events.length; from += FOLD_SLICE_EVENTS) {
      // (Awaited only when it lets other work run: no turn given to other promises between two slices otherwise.)
      const paused = pause();
      if (paused) await paused;
      const folded = this.folder.fold(events.slice(from, from + FOLD_SLICE_EVENTS), last ?? this.position, options);
      if (!folded) continue;
      this.eventsApplied += folded.applied;
      last = folded.last;
    }
    if (last === undefined) return;
    this.changes.folded(feed);
    await this.persist(changed.values(), feed, last);
    this.advance(last);
    this.lastBatchAt = performance.now();
    if (this.folding === undefined && this.foldTimer === undefined && this.longJournal(this.disk.sizes())) this.foldWhenQuiet();
  }

  /**
   * Write records and checkpoint to LMDB together, in the background while
   * the next batch is projected (requests read memory, which is already up
   * to date); waits only for the write before. After a failed write nothing
   * more is written, so the disk stays at its last good checkpoint and the
   * next start catches up from there.
   */
  private async persist(changes: Iterable<Change>, feed: readonly FeedEntry[], position: Position): Promise<void> {
    await this.writing;
    if (this.persistFailure !== undefined) return;
    const written = { commit: Number(position.commit), prepare: Number(position.prepare) };
    this.writing = this.disk.write(changes, feed, position).then(() => this.changes.persisted(written), (error: unknown) => {
      this.persistFailure = error;
      this.lastError = `read model not persisted past ${this.position.commit}: ${String(error)}`;
      this.log?.error({ err: error }, 'writing the read model failed; it will catch up from its last checkpoint at restart');
    });
  }

  private advance(position: Position): void {
    this.position = position;
    this.noteHead(position);
    if (this.waiters.length === 0) return;
    const still: Waiter[] = [];
    for (const w of this.waiters) {
      if (comparePositions(position, w.position) >= 0) w.resolve();
      else still.push(w);
    }
    this.waiters = still;
  }
}

/**
 * A batch of events from the log is folded this many at a time, yielding to requests once a slice of the server's
 * internal work has passed (SLICE_MS, the background's too: background.ts says what 2 ms against 5 changed).
 */
const FOLD_SLICE_EVENTS = 100;

/** A pause to call between pieces of work: it lets other work run once `ms` have passed since it last did. */
function slices(ms: number): () => Promise<void> | undefined {
  let sliceStarted = performance.now();
  return () => {
    if (performance.now() - sliceStarted < ms) return undefined;
    return nextTurn().then(() => {
      sliceStarted = performance.now();
    });
  };
}
