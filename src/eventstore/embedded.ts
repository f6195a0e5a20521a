/**
 * The embedded event store: an append-only log in LMDB.
 *
 * - `events`: global position (1, 2, …) → the event
 * - `streams`: [stream, revision] → position (a stream's last key gives its revision)
 * - `stream-ids`: [stream, event id] → position, for every event but a stream's first (idempotent appends)
 * - `meta`: 'head' → the last position; 'indexed' → the last position whose stream entries are written, while
 *   they lag the head (absent when they do not)
 *
 * Appends are idempotent by event id within their stream, as on EventStoreDB:
 * an append to a stream that holds the id appends nothing for it. A stream's
 * first event is found through `streams` (revision 0), so it needs no entry of
 * its own: an import, whose events nearly all start a stream, writes one
 * random-key index entry per event instead of two (500,000 events imported in
 * 19.3 s with an index of every id, 13.7 s this way). Logs written by
 * earlier versions hold every event's id in an `ids` table (id → position),
 * still read for the events written then.
 *
 * Each append runs in one LMDB write transaction, which LMDB serializes
 * across processes, so a CLI import and a running server can share one log:
 * the server's appends wait for the lock on lmdb-js's write thread, an
 * import's chunks (`appendMany`) synchronously. Subscribers see appends of
 * this process at once and those of other processes within one poll interval.
 *
 * The log is opened with lmdb-js's `overlappingSync` off, so a commit is
 * flushed to disk before it returns (an acknowledged append survives a power
 * loss) and written the way stock LMDB writes it. With it on (lmdb-js's
 * default), a process writes a second meta page for its flushed transaction
 * after it has let go of the write lock, and keeps its own idea of which
 * transaction is flushed: safe in one process, not when two write the same
 * file. With two processes writing one log that way, the server died in
 * three runs of four of `bench/two-writers.ts --import-processes 3000
 * --overlapping-sync true` (twice seen as free-list failures, as in the 1M
 * soak; the third's error was cut off); with it off, in none of three.
 *
 * An import that has the log to itself puts its stream entries off (`deferStreamEntries`) and writes them at its
 * end, or every 2M events (`indexStreams`), sorted: an import's streams are new and named at random, so each chunk's entries went to
 * leaves all over `streams`, and every chunk wrote most of the table again (1.77M events: 13 s of the appends' 24 s,
 * and 4.6 GB written for a 1.1 GB log). While entries lag, 'indexed' in `meta` says from where: every write
 * transaction that looks a stream up first writes the entries of the events past it (read from the log, or this
 * process's own put-off entries), and a read of a stream also reads those events. So a server that appends during
 * such an import, or after one that was killed, sees every stream as it is. An import alone with the log may also
 * hand it events made ahead into the bytes it stores (`appendPrepared`), their entries put off the same way, and
 * then those entries in key order as the tables' key bytes (`indexPrepared`): its preparing thread made them.
 *
 * Logs written by earlier versions also hold a `heads` table (stream → last
 * revision), no longer read or written: the `streams` table gives the same,
 * and a random-key index fewer made an import of 1.77M events a quarter
 * faster (132 → 101 s).
 */
import { EventEmitter } from 'node:events';
import { asBinary, open, type Database, type RootDatabase } from 'lmdb';
import { unpack } from 'msgpackr';
import { FREE_PAGES, lmdbFileProblem, MAP_SIZE } from '../lmdb-file.js';
import { compareKeys, inKeyOrder, type Keyed, type KeyOrder } from './key-order.js';
import { isPrefixOf, PackedData, plainShapes, type Shapes, unpacked } from './packed-data.js';
import { envelopeIdOf, MAX_SHARED_SHAPES, storedEventMost, writeStoredEvent } from './stored-event.js';
import {
  type AppendManyOptions,
  type AppendManyResult,
  type AppendResult,
  type EventStore,
  type EventToAppend,
  type ExpectedRevision,
  type KeyedPositions,
  type Position,
  type PreparedEntries,
  type PreparedEvents,
  type PreparedOver,
  type RecordedEvent,
  type StreamAppend,
  type Subscription,
  type SubscriptionHandler,
  startOfLog,
  eventNumber,
  nthBytes,
  WrongExpectedRevisionError,
} from './port.js';

interface StoredEvent {
  id: string;
  type: string;
  stream: string;
  revision: number;
  data: unknown;
}

const HEAD = 'head';
const INDEXED = 'indexed';

/** The `events` database's key of msgpackr's shared structures (lmdb-js's `sharedStructuresKey`). */
const STRUCTURES = Symbol.for('structures');
/** The same key, typed as the database's keys (it is one lmdb-js adds to them). */
const STRUCTURES_KEY = STRUCTURES as unknown as number;
/**
 * Stream entries a process puts off at most, before they are written in the transaction that passes this, whole
 * (an import writes its own in slices before that: see its INDEX_EVERY).
 */
const MAX_DEFERRED = 4_000_000;

/** The event log cannot be opened or read: nothing can be served from it. */
export class UnreadableLogError extends Error {
  constructor(
    readonly path: string,
    readonly problem: string,
  ) {
    super(`cannot open the event log at ${path}: ${problem}`);
    this.name = 'UnreadableLogError';
  }
}
/**
 * Events a subscription reads from the log at a time: each batch is folded, its records written and its indexes
 * brought up to date as one, so this bounds the work a request may wait behind while a live import streams in (at
 * 5,000 the server's longest event-loop delays during one were 1.4–2.7 s; at 1,000, 0.4–0.8 s, on growing data).
 */
const READ_BATCH = 1000;

export interface EmbeddedOptions {
  /** How often to look for appends by other processes, in ms. */
  pollIntervalMs?: number;
  /**
   * lmdb-js's `overlappingSync`: off unless asked (see the top of this file); bench/two-writers.ts turns it on
   * to show the damage it did.
   */
  overlappingSync?: boolean;
  /** Open for reading only (a log to copy out of: nothing is written to its files). */
  readOnly?: boolean;
  /**
   * A subscription lets go of the log's pages this process has read (`releaseReadPages`) every this many events it
   * has read (0: never), at the first batch after them when no use of the store is under way. Default 100,000: a
   * server following an import of 1,000,000 events had 1,753 MB of files mapped by its end (at 300,000 events, 749 MB
   * of it the log's: pages the import wrote, mapped as the server read the events among them).
   */
  releaseEvery?: number;
}

const toPosition = (n: number): Position => {
  const b = BigInt(n);
  return { commit: b, prepare: b };
};

/** An event's entries in the stream indexes (putStreamEntries). */
interface StreamEntry {
  readonly stream: string;
  readonly revision: number;
  readonly id: string;
  readonly position: number;
}

/** lmdb-js's put at the end of a table (MDB_APPEND): refused, and nothing put, unless the key is past its last. */
const APPEND = { append: true };

export class EmbeddedEventStore implements EventStore {
  readonly kind = 'embedded';
  private root!: RootDatabase;
  private events!: Database<StoredEvent, number>;
  private streams!: Database<number, [string, number]>;
  private streamIds!: Database<number, [string, string]>;
  /** `streams` and `stream-ids` again, given their keys as bytes (ordered-binary's, as the others write them): prepared entries'. */
  private streamKeys!: Database<number, Uint8Array>;
  private streamIdKeys!: Database<number, Uint8Array>;
  /** Every event's position by id, in logs written by earlier versions (nothing is added to it). */
  private legacyIds!: Database<number, string>;
  private meta!: Database<number, string>;
  /** Stream entries `indexStreams` writes a transaction, at most (see there; tests lower it). */
  static indexSlice = 500_000;
  private readonly appended = new EventEmitter();
  /** Stream entries this process's appends put off (deferStreamEntries), not yet written, and the first one's position. */
  private deferred: StreamEntry[] = [];
  private deferredFrom: number | undefined;
  /**
   * In the write transaction under way: the shapes of packed data (PackedData) it has checked against the log's, and
   * the stored event's record id over them (undefined: such data is unpacked and written as lmdb-js writes objects).
   */
  private packedOver: { shapes: Shapes; envelope: number | undefined } | undefined;
  /** Where a packed event's value is put together (put copies it). */
  private valueBytes = new Uint8Array(4096);
  private readonly pollIntervalMs: number;
  private readonly releaseEvery: number;
  private readonly readOnly: boolean;
  /** While the environment is opened again (releaseReadPages): what every use of the store waits for first. */
  private reopening: Promise<void> | undefined;
  /** Uses of the store under way (an append waits for lmdb-js's write thread), and who waits for none. */
  private inUse = 0;
  private whenUnused: (() => void) | undefined;

  private constructor(
    private readonly openRoot: () => RootDatabase,
    options: EmbeddedOptions = {},
  ) {
    this.readOnly = options.readOnly === true;
    this.openEnv();
    this.pollIntervalMs = options.pollIntervalMs ?? 100;
    this.releaseEvery = options.releaseEvery ?? 100_000;
    this.appended.setMaxListeners(0);
  }

  private openEnv(): void {
    const root = (this.root = this.openRoot());
    // Opening a database takes LMDB's write lock (lmdb-js opens it in a write transaction), which an import in
    // another process may hold for a chunk's transaction: all of them in one, so a reopen waits for it once, not five
    // times (a server's release of its pages stalled its requests for 412 ms during a live import).
    const open = () => {
      this.events = root.openDB<StoredEvent, number>({ name: 'events', sharedStructuresKey: STRUCTURES });
      this.streams = root.openDB<number, [string, number]>({ name: 'streams' });
      this.streamIds = root.openDB<number, [string, string]>({ name: 'stream-ids' });
      this.streamKeys = root.openDB<number, Uint8Array>({ name: 'streams', keyEncoding: 'binary' });
      this.streamIdKeys = root.openDB<number, Uint8Array>({ name: 'stream-ids', keyEncoding: 'binary' });
      this.legacyIds = root.openDB<number, string>({ name: 'ids' });
      this.meta = root.openDB<number, string>({ name: 'meta' });
    };
    if (this.readOnly) open();
    else root.transactionSync(open);
  }

  /**
   * Let go of the log's pages this process has read (they stay mapped, and counted in its resident memory, until
   * the file is closed): as a replay reads the whole log (`serve` catching up on threads: this thread reads it for
   * them), about the log's size; as a server follows an import, what the import wrote. The file is closed and
   * opened again once no use of the store is under way; uses begun meanwhile wait for it (every read is
   * synchronous inside: no cursor outlives a call). Threads of one process share its mapping: the pages go only if
   * no other thread has the log open.
   */
  async releaseReadPages(): Promise<void> {
    if (this.reopening !== undefined) return this.reopening;
    let reopened!: () => void;
    this.reopening = new Promise((resolve) => (reopened = resolve));
    try {
      while (this.inUse > 0) await new Promise<void>((resolve) => (this.whenUnused = resolve));
      this.whenUnused = undefined;
      await this.reopen();
    } finally {
      this.reopening = undefined;
      reopened();
    }
  }

  /**
   * `releaseReadPages` if no use of the store is under way now, else nothing (whether it did): a subscription's,
   * which must not wait. A server's append can wait seconds for an import's write lock: the subscription, and every
   * use of the store begun after it, would wait as long.
   */
  private async releaseReadPagesIfIdle(): Promise<boolean> {
    if (this.reopening !== undefined || this.inUse > 0) return false;
    await this.releaseReadPages();
    return true;
  }

  private async reopen(): Promise<void> {
    await this.root.close();
    this.openEnv();
    // A read at once takes this process's place in LMDB's reader table again: an import that finds no other
    // process there appends in whole chunks of 100,000 events, holding the write lock for seconds (openElsewhere).
    this.meta.get(HEAD);
  }

  /** Do `work` with the store, once it is not being opened again (see releaseReadPages). */
  private async use<T>(work: () => T | Promise<T>): Promise<T> {
    while (this.reopening !== undefined) await this.reopening;
    this.inUse++;
    try {
      return await work();
    } finally {
      if (--this.inUse === 0) this.whenUnused?.();
    }
  }

  /** Open the log at `path` (made if missing); a file LMDB cannot safely map is an UnreadableLogError, never a crash. */
  static open(path: string, options: EmbeddedOptions = {}): EmbeddedEventStore {
    const problem = lmdbFileProblem(path);
    if (problem !== undefined) throw new UnreadableLogError(path, problem);
    try {
      const readOnly = options.readOnly ? { readOnly: true } : {};
      const overlappingSync = options.overlappingSync ?? false;
      return new EmbeddedEventStore(() => open({ path, mapSize: MAP_SIZE, compression: false, overlappingSync, ...FREE_PAGES, ...readOnly }), options);
    } catch (error) {
      throw new UnreadableLogError(path, error instanceof Error ? error.message : String(error));
    }
  }

  /**
   * One stream's append, the server's kind (a sites POST, a webhook's state): queued to lmdb-js's write thread,
   * which waits for the write lock, so the event loop serves requests while another process (an import) holds it.
   * The callback runs on this thread once the lock is held, in a child transaction: a refused append (a revision
   * conflict) leaves nothing in a batch it shares with others.
   */
  async append(stream: string, events: readonly EventToAppend[], expectedRevision: ExpectedRevision = 'any'): Promise<AppendResult> {
    const result = await this.use(() => this.root.childTransaction(() => {
      this.packedOver = undefined;
      const log = { head: this.meta.get(HEAD) ?? 0 };
      this.indexLagging(log.head);
      const { nextRevision, position } = this.appendInTxn({ stream, events, expectedRevision }, log);
      this.meta.put(HEAD, log.head);
      return { nextRevision, position: toPosition(position) };
    }));
    this.appended.emit('append');
    return result;
  }

  async appendMany(appends: Iterable<StreamAppend>, options: AppendManyOptions = {}): Promise<AppendManyResult> {
    const result = await this.use(() => this.root.transactionSync(() => {
      this.packedOver = undefined;
      const log = { head: this.meta.get(HEAD) ?? 0 };
      const tookKnown = options.asOf !== undefined && log.head === eventNumber(options.asOf);
      const defer = tookKnown && options.deferStreamEntries === true;
      if (defer) {
        if (this.meta.get(INDEXED) === undefined) this.meta.put(INDEXED, log.head);
        this.deferredFrom ??= log.head + 1;
      } else this.indexLagging(log.head);
      let position: number | undefined;
      const later: StreamEntry[] | undefined = defer ? this.deferred : tookKnown ? [] : undefined;
      for (const append of appends) position = this.appendInTxn(append, log, tookKnown, later).position;
      if (defer && this.deferred.length >= MAX_DEFERRED) this.indexLagging(log.head);
      else if (later && !defer) this.putStreamEntries(later);
      this.meta.put(HEAD, log.head);
      return { position: position === undefined ? undefined : toPosition(position), tookKnown };
    }));
    this.appended.emit('append');
    return result;
  }

  async appendPrepared({ values, ends }: PreparedEvents, { asOf, shapes, envelope }: PreparedOver): Promise<AppendManyResult> {
    const result = await this.use(() =>
      this.root.transactionSync((): AppendManyResult => {
        this.packedOver = undefined;
        const head = this.meta.get(HEAD) ?? 0;
        if (head !== eventNumber(asOf) || this.envelopeOver(shapes) !== envelope) return { position: undefined, tookKnown: false };
        // (Entries this process put off otherwise are written first: those of prepared events are the log's to read.)
        if (this.deferred.length > 0) this.indexLagging(head);
        if (this.meta.get(INDEXED) === undefined) this.meta.put(INDEXED, head);
        let position = head;
        let start = 0;
        for (const end of ends) {
          this.events.putSync(++position, asBinary(values.subarray(start, end)) as unknown as StoredEvent, APPEND);
          start = end;
        }
        this.meta.put(HEAD, position);
        return { position: toPosition(position), tookKnown: true };
      }),
    );
    this.appended.emit('append');
    return result;
  }

  /**
   * A slice in one transaction, unless another process has written them meanwhile; with the last, those of any other
   * events that lag, read from the log, and 'indexed' gone.
   */
  async indexPrepared({ from, through, last, streams, ids }: PreparedEntries): Promise<void> {
    await this.use(() =>
      this.root.transactionSync(() => {
        const indexed = this.meta.get(INDEXED);
        if (indexed === undefined) return;
        this.putKeyed(this.streamKeys, streams, streams.exact ? this.pastLastKey(this.streamKeys, streams) : streams.ends.length);
        this.putKeyed(this.streamIdKeys, ids, ids.ends.length);
        if (!last) return;
        const entries: StreamEntry[] = [];
        const head = this.meta.get(HEAD) ?? 0;
        for (const range of [{ start: indexed + 1, end: from }, { start: through + 1, end: head + 1 }]) {
          for (const { key, value } of this.events.getRange(range)) entries.push({ stream: value.stream, revision: value.revision, id: value.id, position: key });
        }
        // (This process's put-off entries are among those read.)
        this.deferred = [];
        this.deferredFrom = undefined;
        this.putStreamEntries(entries);
        this.meta.remove(INDEXED);
      }),
    );
  }

  /** Inside a write transaction: put keyed positions, appended from `append` on while LMDB takes them (then put as any other). */
  private putKeyed(table: Database<number, Uint8Array>, keyed: KeyedPositions, append: number): void {
    for (let i = 0; i < keyed.ends.length; i++) {
      const key = nthBytes(keyed.keys, keyed.ends, i);
      if (i >= append) {
        // (lmdb-js's putSync says whether it put, within a transaction; its types say nothing.)
        if ((table.putSync(key, keyed.positions[i]!, APPEND) as unknown as boolean) === true) continue;
        append = keyed.ends.length;
      }
      table.putSync(key, keyed.positions[i]!);
    }
  }

  /** Where in `keyed` (in key order) the keys past the last of `table` begin. */
  private pastLastKey(table: Database<number, Uint8Array>, keyed: KeyedPositions): number {
    let last: Uint8Array | undefined;
    for (const key of table.getKeys({ reverse: true, limit: 1 })) last = key;
    if (last === undefined) return 0;
    let low = 0;
    let high = keyed.ends.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (Buffer.compare(nthBytes(keyed.keys, keyed.ends, mid), last) > 0) high = mid;
      else low = mid + 1;
    }
    return low;
  }

  /**
   * Whether a process other than this one has the log open: LMDB's reader table lists every process that has read
   * it (a serving process reads it every poll interval). Slots of processes that have died are cleared first.
   */
  openElsewhere(): boolean {
    this.root.readerCheck();
    const pids = this.root
      .readerList()
      .split('\n')
      .map((line) => /^\s*(\d+)\s/.exec(line)?.[1])
      .filter((pid): pid is string => pid !== undefined);
    return pids.some((pid) => Number(pid) !== process.pid);
  }

  /**
   * Runs inside a write transaction: reads see the transaction's own writes.
   * `log.head` is the last position, kept by the caller for the whole
   * transaction and stored once at its end. With `takeKnown` (the head is
   * where the caller last saw it), a known revision is the stream's and the
   * ids are new to it, with no look-up: an import's appends nearly all start
   * a stream, and looking each up in `streams` was 7.5 of the 25 s its appends
   * of 1.77M events took (and the ids of the rest, 2 s).
   */
  private appendInTxn(
    { stream, events, expectedRevision = 'any', knownRevision }: StreamAppend,
    log: { head: number },
    takeKnown = false,
    later?: StreamEntry[],
  ): { nextRevision: number; position: number } {
    const known = takeKnown && knownRevision !== undefined;
    // A look-up of the stream must see the entries put off so far.
    if (!known && later === this.deferred) this.indexLagging(log.head);
    else if (!known && later !== undefined && later.length > 0) this.putStreamEntries(later);
    const current = known ? (knownRevision < 0 ? undefined : knownRevision) : this.lastRevision(stream);
    const holds = current === undefined || known ? () => undefined : this.idsOf(stream);
    const fresh: EventToAppend[] = [];
    const ids = new Set<string>();
    for (const e of events) {
      if (ids.has(e.id) || holds(e.id) !== undefined) continue;
      ids.add(e.id);
      fresh.push(e);
    }
    if (fresh.length === 0) {
      // Every event is already in the stream: answer as the first append did.
      const last = events.at(-1);
      const position = last === undefined ? log.head : (holds(last.id) ?? log.head);
      return { nextRevision: this.events.get(position)?.revision ?? current ?? -1, position };
    }
    checkExpected(stream, expectedRevision, current);
    let revision = current ?? -1;
    let position = log.head;
    // Put when the append ends, or (revisions taken) when the batch ends or a look-up needs them: in key order.
    const entries = known && later !== undefined ? later : [];
    for (const e of fresh) {
      position += 1;
      revision += 1;
      this.putEvent(position, e, stream, revision);
      entries.push({ stream, revision, id: e.id, position });
    }
    if (entries !== later) this.putStreamEntries(entries);
    log.head = position;
    return { nextRevision: revision, position };
  }

  /**
   * Inside a write transaction: the event at `position`. Positions only grow: appended (MDB_APPEND), each leaf is
   * filled before the next is begun, where a split leaves two part-full ones (1.77M events: 146,319 leaves against
   * 160,175).
   */
  private putEvent(position: number, { id, type, data }: EventToAppend, stream: string, revision: number): void {
    const packed = data instanceof PackedData ? this.packedValue(id, type, stream, revision, data) : undefined;
    if (packed !== undefined) {
      this.events.putSync(position, asBinary(packed) as unknown as StoredEvent, { append: true });
      return;
    }
    this.events.putSync(position, { id, type, stream, revision, data: data instanceof PackedData ? unpacked(data) : data }, { append: true });
  }

  /**
   * The value lmdb-js would write for this event, put together from its packed data (a view of a buffer the next
   * call reuses); undefined when the data's shapes do not fit the log's, or a field is not one `writeShortAscii` writes.
   */
  private packedValue(id: string, type: string, stream: string, revision: number, data: PackedData): Uint8Array | undefined {
    const envelope = this.envelopeOver(data.shapes);
    if (envelope === undefined) return undefined;
    const most = storedEventMost(data.bytes.length);
    if (this.valueBytes.length < most) this.valueBytes = new Uint8Array(2 * most);
    const end = writeStoredEvent(this.valueBytes, 0, envelope, id, type, stream, revision, data.bytes);
    return end < 0 ? undefined : this.valueBytes.subarray(0, end);
  }

  /**
   * Inside a write transaction: the stored event's record id over `shapes`, once the log's shapes are theirs (those
   * the log lacks written now, ahead of the events that use them); undefined when they cannot be (another process
   * shared other shapes since they were read), or `shapes` lack the stored event's.
   */
  private envelopeOver(shapes: Shapes): number | undefined {
    if (this.packedOver?.shapes === shapes) return this.packedOver.envelope;
    const stored = this.storedShapes();
    let envelope: number | undefined;
    if (isPrefixOf(shapes, stored) || isPrefixOf(stored, shapes)) {
      // Never more than lmdb-js shares: a log given more is one its own packer (and every import's) refuses. Data of
      // a shape past them defines its record within itself, so its bytes need none of them.
      const shared = Math.min(shapes.length, MAX_SHARED_SHAPES);
      if (shared > stored.length) this.events.putSync(STRUCTURES_KEY, plainShapes(shapes.slice(0, shared)) as unknown as StoredEvent);
      envelope = envelopeIdOf(shapes);
    }
    this.packedOver = { shapes, envelope };
    return envelope;
  }

  /** The log's shared structures now (see packed-data.ts): the shapes data packed ahead of its append (PackedData) may use. */
  shapes(): Promise<Shapes> {
    return this.use(() => this.storedShapes());
  }

  private storedShapes(): Shapes {
    const bytes = this.events.getBinary(STRUCTURES_KEY);
    return bytes === undefined ? [] : (unpack(bytes) as Shapes);
  }

  /**
   * The entries of events appended (or put off: an import's, see appendMany) in `streams` (stream and revision →
   * position) and, past a stream's first event, `stream-ids` (stream and event id → position), emptying the list.
   * Put in key order (key-order.ts), given or made: an import's streams are new and named at random, and put in the
   * order of the log, each went to another leaf of a tree of a million entries (15.6 of the 49 s an import of 1.77M
   * events took, in a profile). Those past the table's last key, in exact order, are appended at its end.
   */
  private putStreamEntries(entries: StreamEntry[], order: KeyOrder<StreamEntry> = inKeyOrder(entries)): void {
    const { ordered, exact } = order;
    let append = exact ? this.pastLastStreamKey(ordered) : ordered.length;
    for (let i = 0; i < ordered.length; i++) {
      const { stream, revision, position } = ordered[i]!;
      const key: [string, number] = [stream, revision];
      if (i >= append) {
        // (lmdb-js's putSync says whether it put, within a transaction; its types say nothing.)
        if ((this.streams.putSync(key, position, APPEND) as unknown as boolean) === true) continue;
        // Refused (its key is not past the last: a name whose key bytes order otherwise): put as any other, and so the rest.
        append = ordered.length;
      }
      this.streams.put(key, position);
    }
    for (const { stream, id, position } of inKeyOrder(entries.filter((e) => e.revision > 0)).ordered) this.streamIds.put([stream, id], position);
    entries.length = 0;
  }

  /** Where in `ordered` (in exact key order) the keys past the last of `streams` begin: each of those may be appended. */
  private pastLastStreamKey(ordered: readonly Keyed[]): number {
    let last: Keyed | undefined;
    for (const [stream, revision] of this.streams.getKeys({ reverse: true, limit: 1 })) last = { stream, revision };
    if (last === undefined) return 0;
    // (A key written by other means: past where this order can tell.)
    if (typeof last.stream !== 'string' || typeof last.revision !== 'number') return ordered.length;
    let low = 0;
    let high = ordered.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (compareKeys(ordered[mid]!, last) > 0) high = mid;
      else low = mid + 1;
    }
    return low;
  }

  /**
   * Inside a write transaction: write the stream entries of the events past 'indexed' (through `head`), if they lag:
   * this process's put-off ones, and those of events before them read from the log (another process put them off and
   * has not written them yet, or was killed first).
   */
  private indexLagging(head: number): void {
    const indexed = this.meta.get(INDEXED);
    if (indexed === undefined) {
      // Another process wrote them, this process's included.
      this.deferred = [];
      this.deferredFrom = undefined;
      return;
    }
    const held = this.deferred;
    const firstHeld = this.deferredFrom ?? head + 1;
    this.deferred = [];
    this.deferredFrom = undefined;
    const entries = firstHeld <= indexed ? held.filter((e) => e.position > indexed) : held;
    for (const { key, value } of this.events.getRange({ start: indexed + 1, end: firstHeld })) {
      entries.push({ stream: value.stream, revision: value.revision, id: value.id, position: key });
    }
    this.putStreamEntries(entries);
    this.meta.remove(INDEXED);
  }

  /** The events past 'indexed' (stream entries lag) of `stream`, from `fromRevision`: what `streams` does not list yet. */
  private laggingOf(stream: string, fromRevision: number): RecordedEvent[] {
    const indexed = this.meta.get(INDEXED);
    if (indexed === undefined) return [];
    const out: RecordedEvent[] = [];
    for (const { key, value } of this.events.getRange({ start: indexed + 1 })) {
      if (value.stream === stream && value.revision >= fromRevision) out.push(recorded(key, value));
    }
    return out;
  }

  /**
   * Write the stream entries put off by this process's appends (`deferStreamEntries`), and any others that lag; an
   * import calls it once its appends are done. In slices of the key order, a transaction each: a transaction holds
   * a copy of every page it changes until it commits, and the entries of an import touch nearly every leaf of the
   * tables (at 1.77M entries in one transaction, the import's resident memory rose from 0.9 to 1.3 GB as it ran).
   * `onSlice` is told how many are written after each slice but the last.
   */
  async indexStreams(onSlice?: (written: number) => void): Promise<void> {
    await this.use(() => {
      if (this.deferred.length > EmbeddedEventStore.indexSlice) {
        const { ordered, exact } = inKeyOrder(this.deferred);
        const last = Math.floor((ordered.length - 1) / EmbeddedEventStore.indexSlice) * EmbeddedEventStore.indexSlice;
        for (let from = 0; from < last; from += EmbeddedEventStore.indexSlice) {
          const slice = ordered.slice(from, from + EmbeddedEventStore.indexSlice);
          // (Unless another process has written them all meanwhile.)
          this.root.transactionSync(() => this.meta.get(INDEXED) !== undefined && this.putStreamEntries(slice, { ordered: slice, exact }));
          onSlice?.(from + slice.length);
        }
        // The last slice with any entries that lag before this process's, and 'indexed' gone, in one transaction.
        this.deferred = ordered.slice(last);
      }
      this.root.transactionSync(() => this.indexLagging(this.meta.get(HEAD) ?? 0));
    });
  }

  /** Where an existing stream holds an event id: its position, or undefined when the stream does not hold it. */
  private idsOf(stream: string): (id: string) => number | undefined {
    const firstPosition = this.streams.get([stream, 0]);
    const first = firstPosition === undefined ? undefined : this.events.get(firstPosition)?.id;
    return (id) => {
      if (id === first) return firstPosition;
      const position = this.streamIds.get([stream, id]);
      if (position !== undefined) return position;
      const earlier = this.legacyIds.get(id);
      return earlier !== undefined && this.events.get(earlier)?.stream === stream ? earlier : undefined;
    };
  }

  /** The stream's last revision, or undefined when it has no event. */
  private lastRevision(stream: string): number | undefined {
    // Most appends start a stream (an import's nearly all): one key lookup says so, cheaper than a cursor.
    if (!this.streams.doesExist([stream, 0])) return undefined;
    for (const [, revision] of this.streams.getKeys({ start: [stream, Number.MAX_SAFE_INTEGER], end: [stream, -1], reverse: true, limit: 1 })) {
      return revision;
    }
    return undefined;
  }

  readStream(stream: string, fromRevision = 0, maxCount = Infinity): Promise<RecordedEvent[]> {
    return this.use(() => this.readStreamSync(stream, fromRevision, maxCount));
  }

  private readStreamSync(stream: string, fromRevision: number, maxCount: number): RecordedEvent[] {
    const out: RecordedEvent[] = [];
    let listed = 0;
    for (const { value: position } of this.streams.getRange({
      start: [stream, fromRevision],
      end: [stream, Number.MAX_SAFE_INTEGER],
      ...(maxCount === Infinity ? {} : { limit: maxCount }),
    })) {
      listed++;
      const stored = this.events.get(position);
      if (stored) out.push(recorded(position, stored));
    }
    // Events whose entries lag (an import's, put off) come after every listed one of their stream: after a full page
    // of listed ones, they are in a later page.
    if (listed >= maxCount) return out;
    const lagging = this.laggingOf(stream, fromRevision);
    if (lagging.length === 0) return out;
    return [...out.filter((e) => !lagging.some((l) => l.position.commit === e.position.commit)), ...lagging].slice(0, maxCount);
  }

  readAll(from: Position, maxCount: number): Promise<RecordedEvent[]> {
    return this.use(() => this.readAllSync(from, maxCount));
  }

  private readAllSync(from: Position, maxCount: number): RecordedEvent[] {
    const start = eventNumber(from) + 1;
    const out: RecordedEvent[] = [];
    for (const { key, value } of this.events.getRange({ start, limit: maxCount })) {
      out.push(recorded(key, value));
    }
    return out;
  }

  head(): Promise<Position> {
    return this.use(() => {
      const head = this.meta.get(HEAD);
      return head === undefined ? startOfLog : toPosition(head);
    });
  }

  subscribe(from: Position, handler: SubscriptionHandler): Subscription {
    let position = from;
    let closed = false;
    let pending = true;
    /** Events read since the pages were last let go of. */
    let read = 0;
    let wake: (() => void) | undefined;
    const signal = () => {
      pending = true;
      const w = wake;
      wake = undefined;
      w?.();
    };
    this.appended.on('append', signal);
    let lastHead: number | undefined;
    const poll = setInterval(() => {
      if (this.reopening !== undefined) return;
      this.root.resetReadTxn();
      const head = this.meta.get(HEAD) ?? 0;
      // The head moved since the last look: another process (an import) has just committed, and leaves the write
      // lock free for a while (an import sharing the log pauses after each transaction). The moment to let go of
      // the pages read, if due: reopening the file takes the write lock, and while an import's transaction held
      // it, this thread waited (stalls of 115-280 ms in a server's profiles during live imports of 1M events).
      const moved = lastHead !== undefined && head !== lastHead;
      lastHead = head;
      if (moved && this.releaseEvery > 0 && read >= this.releaseEvery) {
        void this.releaseReadPagesIfIdle().then((released) => {
          if (released) read = 0;
        });
      }
      if (BigInt(head) > position.commit) signal();
    }, this.pollIntervalMs);

    const run = async () => {
      while (!closed) {
        if (!pending) {
          await new Promise<void>((resolve) => (wake = resolve));
          continue;
        }
        pending = false;
        try {
          for (;;) {
            const batch = await this.readAll(position, READ_BATCH);
            if (batch.length === 0 || closed) break;
            await handler.onEvents(batch);
            position = batch[batch.length - 1]!.position;
            read += batch.length;
            // A long way behind (a catch-up of a log no one appends to), not only when the head moves. (If a use is
            // under way, at a later batch.)
            if (this.releaseEvery > 0 && read >= 2 * this.releaseEvery && (await this.releaseReadPagesIfIdle())) read = 0;
          }
          if (!closed) handler.onCaughtUp?.(position);
        } catch (error) {
          handler.onError?.(error);
          pending = true;
          await new Promise((resolve) => setTimeout(resolve, 1000));
        }
      }
    };
    const running = run();
    return {
      close: async () => {
        closed = true;
        clearInterval(poll);
        this.appended.off('append', signal);
        signal();
        await running;
      },
    };
  }

  async close(): Promise<void> {
    while (this.reopening !== undefined) await this.reopening;
    if (this.deferred.length > 0) await this.indexStreams();
    await this.root.close();
  }
}

function recorded(position: number, e: StoredEvent): RecordedEvent {
  return {
    id: e.id,
    type: e.type,
    stream: e.stream,
    revision: e.revision,
    position: toPosition(position),
    data: e.data,
  };
}

function checkExpected(stream: string, expected: ExpectedRevision, current: number | undefined): void {
  const ok =
    expected === 'any' ||
    (expected === 'no_stream' && current === undefined) ||
    (expected === 'stream_exists' && current !== undefined) ||
    (typeof expected === 'number' && current === expected);
  if (!ok) throw new WrongExpectedRevisionError(stream, expected, current ?? 'no_stream');
}
