/**
 * Import of NDJSON event files: every line is parsed and validated (schema,
 * known type, references to records of the same institution) before
 * anything is appended; one bad line and nothing is appended. Lines whose
 * event is already in the log are skipped, so importing a file again
 * appends nothing.
 *
 * Two passes, in bounded memory whatever the file's size: the first reads
 * the log (what exists, for references and idempotency), then checks each
 * line and writes the event it makes to a spool; only when every line
 * passed does the second append the spool, in chunks of one transaction
 * each. The spool holds events as they will be appended (validated,
 * normalized, with their stream), so nothing is parsed by zod twice.
 *
 * A big file's lines are parsed and checked on worker threads (line-workers.ts)
 * while this thread reads the log, then takes their results in file order
 * and checks them against it: ids, references, what each line's event needs.
 */
import { statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import type { DomainEvent } from '../events/catalog.js';
import { LearningPacker, PackedData } from '../eventstore/packed-data.js';
import { type AppendManyResult, comparePositions, eventNumber, type EventStore, type Position, type PreparedOver, type StreamAppend } from '../eventstore/port.js';
import { envelopeIdOf } from '../eventstore/stored-event.js';
import { checkedLine, checkLine, type ImportProblem, type LineResult } from './line-check.js';
import { checkedLineBatches } from './line-workers.js';
import { fileLines } from './lines.js';
import { type LogSummary, saveSummary, type SummaryAnchor, whatTheLogHolds } from './log-summary.js';
import { PreparedAppends, type PreparerMessage } from './prepared-appends.js';
import { type Spool, memorySpool } from './spool.js';

export type { ImportProblem } from './line-check.js';
export type { SpooledEvent } from './spool.js';

export class ImportError extends Error {
  constructor(
    readonly file: string,
    /** The first problems found (at most MAX_PROBLEMS). */
    readonly problems: readonly ImportProblem[],
    /** How many problems there are in all. */
    readonly count = problems.length,
  ) {
    const shown = problems.slice(0, 20).map((p) => `  ${file}:${p.line}: ${p.field ? `${p.field}: ` : ''}${p.message}`);
    const more = count > 20 ? [`  … and ${count - 20} more`] : [];
    super([`${file}: ${count} invalid line(s); nothing was imported`, ...shown, ...more].join('\n'));
    this.name = 'ImportError';
  }
}

/**
 * Appending a chunk of a valid file failed (a full disk, an unreachable
 * store): that chunk is not in the log (each is appended in one
 * transaction), the ones before it are; importing the file again appends
 * the rest.
 */
export class ImportAppendError extends Error {
  constructor(
    readonly file: string,
    readonly appended: number,
    readonly total: number,
    cause: unknown,
  ) {
    const problem = cause instanceof Error ? cause.message : String(cause);
    super(
      `${file}: appending to the log failed after ${appended} of ${total} events (${problem}); ` +
        `the log holds those ${appended} and nothing of the rest: importing the file again appends the rest`,
      { cause },
    );
    this.name = 'ImportAppendError';
  }
}

export interface ParsedLine {
  line: number;
  eventId: string;
  event: DomainEvent;
}

/** Lines' results a batch at a time, in file order. */
type LineBatches = AsyncIterable<readonly LineResult[]>;

/** Each line checked on this thread (blank ones left out), in batches. */
async function* checkedHere(rows: Iterable<string>, packer: LearningPacker): LineBatches {
  let line = 0;
  let batch: LineResult[] = [];
  for (const row of rows) {
    const result = checkLine(row, ++line, packer.pack);
    if (result !== undefined) batch.push(result);
    if (batch.length === 1000) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

export interface ImportResult {
  appended: number;
  skipped: number;
}

/** How far an import is: the log read for references, lines read and checked, events appended, or their stream entries written (of `total`, when known). */
export interface ImportProgress {
  readonly phase: 'checking' | 'reading' | 'appending' | 'indexing';
  readonly done: number;
  readonly total?: number;
}
export type OnImportProgress = (progress: ImportProgress) => void;

export interface ImportOptions {
  onProgress?: OnImportProgress;
  /** Where the checked events wait for the append (in memory unless given: a file spool for big files). */
  spool?: Spool;
  /**
   * Events appended per transaction, at most: ALONE_CHUNK while no other process has the log open, CHUNK when one
   * does (fewer when a transaction takes longer than CHUNK_MS).
   */
  chunk?: number;
  /**
   * The store is this import's alone (the CLI's): let go of the log's pages it has read (`releaseReadPages`) every
   * RELEASE_EVERY events read, once the log is read, and every RELEASE_EVERY events appended. An import into a log
   * of 2.77M events otherwise kept the 1.4 GB of pages it read to check references, and its own appends' pages.
   */
  ownsStore?: boolean;
  /** Events appended between two such releases (RELEASE_EVERY unless given). */
  releaseEvery?: number;
  /** Events whose stream entries an import alone with the log puts off, at most, before it writes them (INDEX_EVERY unless given). */
  indexEvery?: number;
  /** Fresh events from which an import alone with the embedded log prepares its appends on a thread of its own (PREPARE_FROM unless given). */
  prepareFrom?: number;
  /** importFile: the file size from which its lines are checked on worker threads (LINE_WORKERS_FROM_BYTES unless given). */
  lineWorkersFrom?: number;
  /** importFile: how many worker threads check a big file's lines (as many as the cores, at most 4, unless given). */
  lineWorkers?: number;
  /** importFile: the bytes of a big file each message of a worker covers (tests lower it). */
  lineBlockBytes?: number;
  /**
   * Where a summary of the log is kept (log-summary.ts): read first, so that only the log after it is read, and
   * written again once the import has appended everything. None unless given.
   */
  summaryFile?: string;
}

/** Problems kept to report (the rest are counted). */
const MAX_PROBLEMS = 1000;
/**
 * Events a transaction appends at most while another process has the log open. A sites POST to a server sharing the
 * log answers once the server has applied its event, so it waits for whatever the import appended before it: a
 * whole chunk at worst. Live imports of 300,000 events into a served 1M-shift DATA_DIR made the README's way from
 * the benchmark's skewed data (bench:operator --reuse, the random search mix at 200/s, two pairs alternated,
 * yardsticks 41.6-47.1 µs): bulk-creates at most 849-863 ms with 5,000 against 1,567-1,737 ms with 20,000 (two
 * earlier runs each: 837 and 1,114 against 1,485 and 1,690 ms), their median 56-143 against 16-79 ms, the reads'
 * p99, the import's rate and the server's peak no different beyond the runs' spread (125-211 against 113-226 ms;
 * 6.1-6.3k against 5.7-6.4k events/s; 2,658-2,702 against 2,648-2,729 MB).
 */
const CHUNK = 5_000;
/**
 * Events a transaction appends while no other process has the log open (an import that owns its store): no one
 * waits for the write lock, and a commit rewrites every leaf of `streams` that its new streams fall into (random
 * keys), so fewer, larger transactions write far less. Chunks bounded by CHUNK_MS had shrunk to 7,000–14,000 events
 * at 1.77M (187 commits, 47 s of transactions). With these chunks and the known revisions, that import took 57–60 s
 * against 87–101 s the same hour, VmHWM 1.32–1.34 GB against 0.93–0.96 GB (more of the log mapped within one
 * transaction; 250,000 a chunk reached 1.46 GB).
 */
const ALONE_CHUNK = 100_000;
/** How long no other process must have had the log open before an import counts itself alone. */
const ALONE_AFTER_MS = 2000;
/**
 * How long one chunk's transaction should hold the log's write lock: a server
 * sharing the log waits that long for its own appends (a sites POST), so the
 * chunk shrinks when its transactions take longer (a big log's random-key
 * indexes make them slower as it grows) and grows back to CHUNK otherwise.
 */
const CHUNK_MS = 250;
const MIN_CHUNK = 500;
/**
 * The least pause after each chunk while another process may have the log open: LMDB's write lock is not fair, and
 * a process taking it again at once would keep a waiting server out for the whole import. The pause is as long as
 * the chunk took when that is longer, so that a server following the log is left the CPU to fold what the import
 * appends and to answer requests. A live import of 300,000 events into the DATA_DIR of a server under the random
 * search mix (bench:operator, two cores, yardsticks 43-53 µs): reads p99 69-256 ms, median 144, in five runs, against
 * 162-287 ms, median 244, in six with 5 ms pauses (p50 0.9-1.5 ms against 6.0-9.7 ms once past the first 5 s of
 * appends); the server's peak the same (2.69-2.79 GB); the import at 6.1-6.7k events/s against 7.2-8.5k.
 */
const PAUSE_MS = 5;
/**
 * Events read or appended between two releases of the pages read (with `ownsStore`). Appends look up and rewrite
 * B-tree pages all over the file (and the kernel maps the pages around each one it faults in), so within a quarter of
 * a million events an import of 1.77M had nearly the whole log mapped again: 740 MB before its last release. Every
 * 25,000: VmHWM 1.10–1.25 GB → 0.96 GB, in the same time.
 */
export const RELEASE_EVERY = 25_000;

/**
 * Events whose stream entries an import alone with the log puts off, at most: then it writes them (in slices of
 * their key order, see EmbeddedEventStore.indexStreams) and goes on. About 100 MB of entries held; each such write
 * rewrites the leaves of the stream tables the entries fall in, so fewer writes write less.
 */
const INDEX_EVERY = 2_000_000;

/**
 * Fresh events from which an import alone with the embedded log (and a file spool) prepares its appends on a thread
 * of its own (prepared-appends.ts): the thread's first chunk comes 32–40 ms after it is started, about what the
 * import's thread spent on 20,000 events' share of that work (1.9 µs an event at 1.77M: the spool read back, the
 * stored bytes made, the stream entries sorted and their keys encoded).
 */
const PREPARE_FROM = 50_000;
/** Chunks prepared ahead of the one being appended, at most (each up to ALONE_CHUNK events, some 30 MB). */
const PREPARED_AHEAD = 2;

/**
 * From this size on, a file's lines are checked on worker threads (`lineWorkers`): starting them and loading the
 * schemas there costs about what checking 10,000 lines here does.
 */
const LINE_WORKERS_FROM_BYTES = 4 * 2 ** 20;

/** Worker threads a big file's lines are checked on: as many as the cores, at most 4. */
const defaultLineWorkers = () => Math.min(4, availableParallelism());

/** Validate a whole file (given as text) against the log, then append it. Throws ImportError and appends nothing on any problem. */
export async function importEvents(store: EventStore, file: string, text: string, options: ImportOptions = {}): Promise<ImportResult> {
  const packer = await packerFor(store);
  return importChecked(store, file, checkedHere(text.split('\n'), packer), packer, options);
}

/**
 * The import's packer of events' data (packed-data.ts): over the shapes the store's log holds, when it takes data
 * packed ahead (the embedded log); else over none (the spool keeps data packed all the same, and it is unpacked for
 * the append).
 */
async function packerFor(store: EventStore): Promise<LearningPacker> {
  return new LearningPacker((await store.shapes?.()) ?? []);
}

/**
 * importEvents for a file on disk, read line by line (any size), telling `onProgress` how far it is now and then.
 * A big file's lines are checked on worker threads while this one reads the log and checks their results against it.
 */
export async function importFile(store: EventStore, file: string, options: ImportOptions = {}): Promise<ImportResult> {
  const { onProgress, lineWorkersFrom = LINE_WORKERS_FROM_BYTES, lineWorkers = defaultLineWorkers(), lineBlockBytes } = options;
  const expected: ExpectedLines = { lines: 0, share: 0 };
  const onLines = (done: number, estimate: number, share: number) => {
    expected.lines = estimate;
    expected.share = share;
    // (The estimate, from the bytes read so far, gives the bar its end and the line its time left.)
    onProgress?.({ phase: 'reading', done, total: Math.max(done, Math.round(estimate)) });
  };
  const packer = await packerFor(store);
  const lines =
    statSync(file).size >= lineWorkersFrom
      ? checkedLineBatches(file, lineWorkers, packer, onLines, lineBlockBytes)
      : checkedHere(counted(fileLines(file), onProgress), packer);
  return importChecked(store, file, lines, packer, options, expected);
}

/** The rows, telling `onProgress` every 10,000 how many have been read. */
function* counted(rows: Iterable<string>, onProgress: OnImportProgress | undefined): Iterable<string> {
  let n = 0;
  for (const row of rows) {
    if (++n % 10_000 === 0) onProgress?.({ phase: 'reading', done: n });
    yield row;
  }
}

/** Check parsed events against the log (references, idempotency), then append them all or none. */
export async function appendChecked(store: EventStore, file: string, lines: readonly ParsedLine[], options: ImportOptions = {}): Promise<ImportResult> {
  const packer = await packerFor(store);
  const results = (async function* () {
    yield lines.map(({ line, eventId, event }) => checkedLine(line, eventId, undefined, event, packer.pack));
  })();
  return importChecked(store, file, results, packer, options);
}

/** How many lines the file holds, as far as the share of it read so far tells (0: not known). */
interface ExpectedLines {
  lines: number;
  share: number;
}

/**
 * The share of a file read before the event ids are given room for the lines it holds at that rate (the first lines
 * are seldom like the rest: an institution's, its categories').
 */
const EXPECT_FROM_SHARE = 1 / 64;

/** `lines` are taken once the log is read: a line without an id has it derived from the log's ids. */
async function importChecked(
  store: EventStore,
  file: string,
  lines: LineBatches,
  packer: LearningPacker,
  options: ImportOptions,
  expected: ExpectedLines = { lines: 0, share: 0 },
): Promise<ImportResult> {
  const { onProgress, chunk = Number.POSITIVE_INFINITY } = options;
  const spool = options.spool ?? memorySpool();
  /** Events appended whose stream entries the store put off (deferStreamEntries) and has not written yet. */
  let deferred = 0;
  const indexEvery = options.indexEvery ?? INDEX_EVERY;
  /** The summary of the log being written, once every event is appended. */
  let summaryWritten: Promise<boolean> | undefined;
  /** Write the stream entries put off so far. Should this fail, the log says from where they lag, and the next append to it writes them: nothing is lost. */
  const indexPutOff = async () => {
    const total = deferred;
    deferred = 0;
    onProgress?.({ phase: 'indexing', done: 0, total });
    await store.indexStreams?.((done) => onProgress?.({ phase: 'indexing', done, total })).catch(() => undefined);
    onProgress?.({ phase: 'indexing', done: total, total });
  };
  try {
    const release = async () => {
      if (options.ownsStore) await store.releaseReadPages?.();
    };
    const releaseEvery = options.releaseEvery ?? RELEASE_EVERY;
    const { summaryFile } = options;
    const { fresh, skipped, head, summary, last, summarized } = await checkAgainstLog(store, file, spool, lines, packer, expected, onProgress, counter(releaseEvery, release), release, summaryFile);
    // Every event's data is packed over these shapes (the store writes those its log lacks before the events).
    const shapes = packer.shapes;
    const packedData = store.shapes === undefined ? (bytes: Uint8Array) => packer.unpack(bytes) : (bytes: Uint8Array) => new PackedData(bytes, shapes);
    const appendedMore = counter(releaseEvery, release);
    // The log as the import last saw it: while its head is there, each spooled event's revision is the one it takes.
    let asOf: Position | undefined = head;
    let appended = 0;
    // Alone once no other process has had the log open for a while: a server lets go of its pages now and then
    // (the file closed and opened again at once), and one such moment must not bring on 100,000-event chunks.
    let seenElsewhere = -Infinity;
    const alone = () => {
      if (options.ownsStore !== true) return false;
      if (store.openElsewhere?.() !== false) seenElsewhere = performance.now();
      return performance.now() - seenElsewhere >= ALONE_AFTER_MS;
    };
    /** The chunk to append next when the last says nothing of it: a whole one alone, else one a server can wait for. */
    const chunkNow = () => Math.min(chunk, alone() ? ALONE_CHUNK : CHUNK);
    let size = chunkNow();
    /**
     * The last event appended, while every append so far took the known revisions (then the log is what was read and
     * what was appended, and nothing else); undefined once one did not (no later one can: the import knows nothing more).
     */
    let lastAppended: SummaryAnchor | undefined;
    /** Once every event is appended (at once: its tables go to the thread that writes it), the summary of the log. */
    const writeSummary = (lastOfImport: SummaryAnchor | undefined, count: number) => {
      if (summary === undefined || summaryWritten !== undefined) return;
      // Up to the import's last event when nothing else was appended meanwhile; else up to the last it read, and the
      // next import reads this one's events again (taking only their revisions: their ids are in the summary).
      const anchor = lastOfImport ?? last;
      // (Written on a thread of its own, at the same time as the stream entries put off.)
      if (anchor !== undefined && (count > 0 || summarized === undefined || comparePositions(anchor.position, summarized.position) !== 0)) summaryWritten = saveSummary(summaryFile!, summary, anchor);
    };
    const envelope = envelopeIdOf(shapes);
    const prepares = store.appendPrepared !== undefined && store.indexPrepared !== undefined && spool.written !== undefined && envelope !== undefined;
    if (prepares && fresh >= (options.prepareFrom ?? PREPARE_FROM) && alone()) {
      const over = { asOf: head, shapes, envelope };
      const allAppended = (anchor: SummaryAnchor) => writeSummary(anchor, fresh);
      ({ appended, asOf, lastAppended } = await appendPrepared(store, { file, spool: spool.written!(), fresh, over, chunk: size, indexEvery, alone, onProgress, appendedMore, allAppended }));
      // (Stopped early, maybe because a server opened the log: the next chunk is one that server can wait for.)
      size = chunkNow();
    }
    // (Those left, if any: a file spool is read from its start again to find them.)
    const items = (appended < fresh ? spool.items(appended) : [])[Symbol.iterator]();
    let next = items.next();
    /** The last event a chunk appended with known revisions (its position to come). */
    let lastOfChunk: Omit<SummaryAnchor, 'position'> | undefined;
    /** Up to `size` spooled events as appends, read from the spool as the store takes them: no chunk is held whole. */
    function* chunkOf(size: number, known: boolean, taken: { n: number }): Generator<StreamAppend> {
      for (; !next.done && taken.n < size; next = items.next(), taken.n++) {
        const { stream, id: eventId, type, revision, data } = next.value;
        const events = [{ id: eventId, type, data: packedData(data) }];
        if (!known) {
          yield { stream, events };
          continue;
        }
        lastOfChunk = { stream, id: eventId, revision };
        yield { stream, events, knownRevision: revision - 1 };
      }
    }
    while (!next.done) {
      const started = performance.now();
      const taken = { n: 0 };
      let result: AppendManyResult;
      // Alone, the stream entries wait for the end (indexStreams), to be written sorted, in a few transactions. No
      // longer alone (a server opened the log), those put off are written first, a slice a transaction: the store
      // would otherwise write them all in the next append's transaction, holding the write lock a server waits for.
      const defer = alone();
      if (!defer && deferred > 0) await indexPutOff();
      try {
        result = await store.appendMany(chunkOf(size, asOf !== undefined, taken), asOf === undefined ? {} : { asOf, deferStreamEntries: defer });
      } catch (error) {
        throw new ImportAppendError(file, appended, fresh, error);
      }
      if (defer && result.tookKnown) deferred += taken.n;
      if (deferred >= indexEvery) await indexPutOff();
      // Another process appended since: what the import knows of the streams may be stale, so it knows nothing more.
      asOf = result.tookKnown ? result.position : undefined;
      lastAppended = result.tookKnown && lastOfChunk !== undefined && result.position !== undefined ? { ...lastOfChunk, position: result.position } : undefined;
      const took = performance.now() - started;
      appended += taken.n;
      onProgress?.({ phase: 'appending', done: appended, total: fresh });
      await appendedMore(taken.n);
      if (alone()) {
        size = Math.min(chunk, ALONE_CHUNK);
        continue;
      }
      if (next.done) break; // (no pause after the last)
      size = Math.max(Math.min(MIN_CHUNK, chunk), Math.min(chunk, CHUNK, Math.round((taken.n * CHUNK_MS) / Math.max(took, 1))));
      await new Promise((resolve) => setTimeout(resolve, Math.max(PAUSE_MS, took)));
    }
    writeSummary(lastAppended, appended);
    return { appended, skipped };
  } finally {
    spool.dispose();
    // What the appends put off, written even when one failed (the chunks before it are in the log).
    if (deferred > 0) await indexPutOff();
    await summaryWritten;
  }
}

/** What `appendPrepared` needs of the import. */
interface PreparedImport {
  readonly file: string;
  /** The spool's file. */
  readonly spool: string;
  readonly fresh: number;
  readonly over: PreparedOver;
  readonly chunk: number;
  readonly indexEvery: number;
  alone(): boolean;
  readonly onProgress: OnImportProgress | undefined;
  appendedMore(n: number): Promise<void>;
  /** Every event is appended, the last as `anchor` says (before their last stream entries are written). */
  allAppended(anchor: SummaryAnchor): void;
}

/**
 * The appends of an import alone with the embedded log, prepared on a thread of their own (prepared-appends.ts): from
 * the spool's first event for as long as the import stays alone and the log is as it knows it, their stream entries
 * written as that thread hands them on. Says how many it appended, and how the log then is as the import knows it;
 * the import appends the rest (none, unless this stopped early) its other way.
 */
async function appendPrepared(store: EventStore, job: PreparedImport): Promise<{ appended: number; asOf: Position | undefined; lastAppended: SummaryAnchor | undefined }> {
  const { onProgress } = job;
  let asOf: Position | undefined = job.over.asOf;
  let lastAppended: SummaryAnchor | undefined;
  let appended = 0;
  /** Appended events whose stream entries are not written yet. */
  let lagging = 0;
  /** Of the entries being handed on, those written so far. */
  let indexed = 0;
  const preparing = new PreparedAppends({
    file: job.spool,
    from: 0,
    firstPosition: eventNumber(asOf) + 1,
    envelope: job.over.envelope,
    chunk: job.chunk,
    ahead: PREPARED_AHEAD,
    indexEvery: job.indexEvery,
    slice: Math.max(1, Math.ceil(job.indexEvery / 8)),
  });
  try {
    for (;;) {
      let message: PreparerMessage;
      try {
        message = await preparing.next();
      } catch {
        break; // (the thread failed: the import goes on its other way)
      }
      if (message.kind === 'end' || message.kind === 'unfit') break;
      if (message.kind === 'entries') {
        await store.indexPrepared!(message);
        indexed += message.streams.ends.length;
        onProgress?.({ phase: 'indexing', done: indexed, total: message.through - message.from + 1 });
        if (message.last) {
          lagging = 0;
          indexed = 0;
        }
        continue;
      }
      if (!job.alone()) break;
      let result: AppendManyResult;
      try {
        result = await store.appendPrepared!(message, { ...job.over, asOf });
      } catch (error) {
        throw new ImportAppendError(job.file, appended, job.fresh, error);
      }
      // Another process appended since: the import knows nothing more, and appends the rest its other way.
      if (!result.tookKnown) {
        asOf = undefined;
        break;
      }
      preparing.taken();
      const n = message.ends.length;
      appended += n;
      lagging += n;
      asOf = result.position!;
      lastAppended = { ...message.last, position: asOf };
      onProgress?.({ phase: 'appending', done: appended, total: job.fresh });
      await job.appendedMore(n);
      if (appended === job.fresh) job.allAppended(lastAppended);
    }
  } finally {
    await preparing.stop();
    // Stopped with entries of appended events not handed on (or failing): written from the log.
    if (lagging > 0) await store.indexStreams?.().catch(() => undefined);
  }
  return { appended, asOf, lastAppended };
}

/**
 * Read the log, then check every line against it into the spool (each event with its revision, counted from each
 * stream's revision in the log). Of what was read, the event ids and the records (some 170 MB at 1.77M events) are
 * let go of here, unless a summary of the log is to be written.
 */
async function checkAgainstLog(
  store: EventStore,
  file: string,
  spool: Spool,
  lines: LineBatches,
  packer: LearningPacker,
  expected: ExpectedLines,
  onProgress: OnImportProgress | undefined,
  readMore: (n: number) => Promise<void>,
  logRead: () => Promise<void>,
  summaryFile: string | undefined,
) {
  const { ids, directory, revisions, listing, head, last, summarized } = await whatTheLogHolds(store, { onProgress, readMore, summaryFile });
  await logRead();
  const checked = await checkInto(spool, file, lines, packer, expected, { ids, directory, listing, revisions });
  const summary = summaryFile === undefined ? undefined : { ids, directory, revisions, listing };
  return { ...checked, head, summary, last, summarized };
}

/**
 * A count that calls `then` each time it passes another multiple of `every` (a batch that passes several calls it
 * once); resolves once `then` has.
 */
export function counter(every: number, then: () => Promise<void>): (more: number) => Promise<void> {
  let count = 0;
  return async (more) => {
    const before = Math.floor(count / every);
    count += more;
    if (Math.floor(count / every) > before) await then();
  };
}

/**
 * Check every line (schema problems first: while there are any, references
 * are not reported, a line refused for its schema would make others seem to
 * refer to nothing) and spool the events not yet in the log; throws
 * ImportError when any line is wrong.
 */
async function checkInto(
  spool: Spool,
  file: string,
  lines: LineBatches,
  packer: LearningPacker,
  expected: ExpectedLines,
  { ids, directory, listing, revisions }: Pick<LogSummary, 'ids' | 'directory' | 'listing' | 'revisions'>,
): Promise<{ fresh: number; skipped: number }> {
  const refused = new Problems();
  const unresolved = new Problems();
  let fresh = 0;
  let skipped = 0;
  let read = 0;
  let reserved = false;
  for await (const batch of lines) {
    if (!reserved && expected.share >= EXPECT_FROM_SHARE) {
      ids.reserve(expected.lines - read);
      reserved = true;
    }
    read += batch.length;
    for (const parsed of batch) {
      if ('problems' in parsed) {
        refused.add(parsed.problems);
        continue;
      }
      const eventId = parsed.id ?? ids.derive(parsed.raw!);
      if (ids.metBefore(eventId)) {
        skipped++;
        continue;
      }
      if (refused.count > 0) continue;
      const { line } = parsed;
      unresolved.add(directory.checkFacts(parsed.facts).map((p) => ({ line, field: `data.${p.field}`, message: p.message })));
      if (unresolved.count > 0) continue;
      // Data a worker could not pack (of a shape the packer had not met when it was packed) is packed here, in order.
      const data = typeof parsed.data === 'string' ? packer.pack(JSON.parse(parsed.data)) : parsed.data;
      // Its revision in its stream, counted here, in file order: the log as read, then the file's events before it.
      spool.write({ stream: parsed.stream, id: eventId, type: parsed.type, revision: revisions.next(parsed.stream) + 1, data });
      listing.fold(parsed.type, parsed.facts.institution, () => packer.unpack(data) as Record<string, unknown>);
      fresh++;
    }
  }
  refused.throwIfAny(file);
  unresolved.throwIfAny(file);
  return { fresh, skipped };
}

/** Problems found: all counted, the first MAX_PROBLEMS kept. */
class Problems {
  readonly kept: ImportProblem[] = [];
  count = 0;

  add(problems: readonly ImportProblem[]): void {
    this.count += problems.length;
    for (const p of problems) if (this.kept.length < MAX_PROBLEMS) this.kept.push(p);
  }

  throwIfAny(file: string): void {
    if (this.count > 0) throw new ImportError(file, this.kept, this.count);
  }
}
