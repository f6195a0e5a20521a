/**
 * `vm-api rebuild` on several cores: the institutions are spread over
 * replay workers (threads). This thread reads the log once and sends each
 * worker the events of its institutions (a projection never reads across
 * institutions, see folder.ts; issued keys go to every worker, whose
 * ledger judges a key across institutions), a few batches ahead of it, no
 * more; each folds them, builds its tables and encodes its snapshot. This
 * thread writes their change feed entries as they come, then each
 * worker's snapshot a piece at a time as it comes (a worker encodes the
 * next once the last is written), and the checkpoint last. A worker that
 * fails fails the rebuild before the checkpoint is written (what was
 * written by then is cleared with the read model at the next start: none
 * of it is current without a checkpoint).
 *
 * Institutions are weighed by a sample of the embedded log's events, so
 * that the heaviest do not share a worker; on EventStoreDB (whose
 * positions cannot be sampled) they are spread by a hash of their ids.
 */
import { Worker } from 'node:worker_threads';
import { comparePositions, type EventStore, type Position, type RecordedEvent, startOfLog } from '../eventstore/port.js';
import { type FoldedEvent, foldedPart, institutionOfEvent, judgedAcrossInstitutions } from './folder.js';
import { assignInstitutions, workerOf } from './partition.js';
import type { ReadModelStore } from './persistence.js';
import {
  REPLAY_MORE,
  type ReplayEnd,
  type ReplayEvents,
  type ReplayFeed,
  type ReplayFolded,
  type ReplayPiece,
  type ReplayResult,
  type ReplayTask,
} from './replay-messages.js';
import { FeedWriter } from './change-feed.js';
import { eventsUpTo } from './replay.js';

/**
 * A replay worker's young generation, in MB. A replay makes a record or
 * more per event, each of which survives a minor collection or two: with
 * V8's default the two workers of a 1.5M-event replay spent 9 s in minor
 * collections, with 64 MB 5 s (19 s against 23 s in all; 48 MB was as
 * slow as the default, 96 MB no faster than 64).
 */
const YOUNG_GENERATION_MB = 64;

/**
 * Events read between two releases of the log's pages: read through a mapping of the log, they stay resident (and
 * the kernel maps the pages around each one read) until the log is closed; a rebuild of 1.77M events had 1.2 GB of
 * it resident at the end. Only this thread reads the log, so it lets go of them whenever it likes. (When each
 * worker read the whole log itself, they shared one mapping and had to close it together, waiting for each other.)
 * Rebuilds of 1.77M events, alternated with that way: 19.8–24.0 s against 21.6–25.7 s, VmHWM 1.56–1.60 GB against
 * 2.01–2.10 GB: each worker now decodes only its own events, not the whole log.
 */
export const RELEASE_EVERY = 50_000;

/**
 * Batches sent to a worker and not yet folded, at most: a worker has the next ones at hand while this thread reads
 * on, and events do not pile up in memory when it cannot keep up. A log in long runs of one worker's institutions
 * leaves the other idle once this bound stops the reading. Rebuilds of 1.77M events (runs of an institution each),
 * alternated: 16 batches 21.7–22.6 s, VmHWM 1.55–1.56 GB; 64: 17.8–20.8 s, 1.57–1.58 GB; 256: 18.5–19.0 s,
 * 1.60–1.71 GB; 1,024: 17.6–18.5 s, 2.12–2.17 GB.
 */
const AHEAD = 64;

/** Events sampled to weigh the institutions. */
const SAMPLES = 1024;

/** Institutions by how many of `samples` events spread evenly over the embedded log are theirs (none for other stores). */
async function sampleInstitutions(store: EventStore, head: Position, samples = SAMPLES): Promise<Map<string, number>> {
  const weights = new Map<string, number>();
  if (store.kind !== 'embedded' || head.commit <= 0n) return weights;
  // The embedded log's positions are 1, 2, … head: reading after p - 1 reads event p.
  const size = Number(head.commit);
  const count = Math.min(samples, size);
  for (let i = 0; i < count; i++) {
    const before = BigInt(Math.floor((i * size) / count));
    const [event] = await store.readAll({ commit: before, prepare: before }, 1);
    if (!event) continue;
    const institution = institutionOfEvent(event);
    weights.set(institution, (weights.get(institution) ?? 0) + 1);
  }
  return weights;
}

/** A replay worker, its result, and its batches sent but not yet folded. */
interface Running {
  readonly worker: Worker;
  result: Promise<ReplayResult>;
  ahead: number;
  /** Called when the worker has folded a batch. */
  onFolded?: () => void;
}

function runWorker(task: ReplayTask, feed: FeedWriter, write: (piece: ReplayPiece) => Promise<unknown>): Running {
  const worker = new Worker(new URL('./replay-worker.js', import.meta.url), {
    workerData: task,
    resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
  });
  const running = { worker, ahead: 0 } as Running;
  running.result = new Promise<ReplayResult>((resolve, reject) => {
    // Batches folded and feed entries, then the snapshot's pieces (each written before the worker makes the next), then the result.
    worker.on('message', (message: ReplayFolded | ReplayFeed | ReplayPiece | ReplayResult) => {
      if ('folded' in message) {
        running.ahead--;
        running.onFolded?.();
      } else if ('feed' in message) feed.addBatch(message.feed);
      else if ('buffer' in message) write(message).then(() => worker.postMessage(REPLAY_MORE), reject);
      else resolve(message);
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`replay worker ${task.index} exited with code ${code} before it was done`)));
  });
  // Awaited once the log is read (or while a send waits for the worker): a failure before then is not unhandled.
  running.result.catch(() => undefined);
  return running;
}

/** Send a worker its next events, once it is less than AHEAD batches behind (or fails). */
async function sendTo(running: Running, events: readonly FoldedEvent[]): Promise<void> {
  while (running.ahead >= AHEAD) {
    await Promise.race([new Promise<void>((resolve) => (running.onFolded = resolve)), running.result]);
  }
  running.ahead++;
  running.worker.postMessage({ events } satisfies ReplayEvents);
}

/**
 * Replay the whole log into the (cleared) read model on disk with
 * `workers` threads; the events applied and the position reached.
 */
export async function replayInParallel(
  store: EventStore,
  disk: ReadModelStore,
  workers: number,
  /** Told how far the replay is: the events read, and the head it replays to. */
  onProgress?: (read: number, head: Position) => void,
  /** Events read between two releases of the log's pages. */
  releaseEvery = RELEASE_EVERY,
): Promise<{ applied: number; position: Position }> {
  const head = await store.head();
  if (comparePositions(head, startOfLog) <= 0) return { applied: 0, position: startOfLog };
  const assignment = assignInstitutions(await sampleInstitutions(store, head), workers);
  // Every worker's change feed entries, written as they come (the snapshot, written last, makes them count).
  const feed = new FeedWriter((entries) => disk.appendFeed(entries));
  // Pieces as they come: a kind's chunks are numbered in that order, each institution's in its worker's order.
  const snapshot = disk.snapshotWriter();
  const write = (piece: ReplayPiece) => {
    const buffer = Buffer.from(piece.buffer.buffer, piece.buffer.byteOffset, piece.buffer.byteLength);
    return 'table' in piece ? snapshot.table(piece.table.kind, piece.table.institution, buffer) : snapshot.chunk(piece.chunk.kind, buffer, piece.chunk.records);
  };
  const running = Array.from({ length: workers }, (_, index) => runWorker({ assignment: [...assignment], workers, index }, feed, write));
  let results: ReplayResult[];
  try {
    const position = await readOut(store, head, running, assignment, onProgress, releaseEvery);
    for (const { worker } of running) worker.postMessage({ end: position } satisfies ReplayEnd);
    results = await Promise.all(running.map((r) => r.result));
  } catch (error) {
    await Promise.all(running.map(({ worker }) => worker.terminate()));
    await feed.done().catch(() => undefined);
    throw error;
  }
  await feed.done();
  const { position } = results[0]!;
  const applied = results.reduce((sum, result) => sum + result.applied, 0);
  if (comparePositions(position, startOfLog) > 0) await snapshot.end(position);
  return { applied, position };
}

/**
 * Read the log up to `head` and send each worker its events, letting go of the log's pages every `releaseEvery`
 * events read (0: only once the log is read) and once the log is read; the position of the last event read.
 */
async function readOut(
  store: EventStore,
  head: Position,
  running: readonly Running[],
  assignment: ReadonlyMap<string, number>,
  onProgress: ((read: number, head: Position) => void) | undefined,
  releaseEvery: number,
): Promise<Position> {
  const workers = running.length;
  let position = startOfLog;
  let read = 0;
  let released = 0;
  for await (const events of eventsUpTo(store, startOfLog, head)) {
    // (Each event as the part of it a fold reads: see foldedPart.)
    const batches = Array.from({ length: workers }, () => [] as FoldedEvent[]);
    for (const event of events) {
      if (judgedAcrossInstitutions(event)) for (const batch of batches) batch.push(foldedPart(event));
      else batches[workerOf(institutionOfEvent(event), assignment, workers)]!.push(foldedPart(event));
    }
    for (const [index, batch] of batches.entries()) if (batch.length > 0) await sendTo(running[index]!, batch);
    position = events[events.length - 1]!.position;
    read += events.length;
    onProgress?.(read, head);
    if (store.releaseReadPages !== undefined && releaseEvery > 0 && read - released >= releaseEvery) {
      released = read;
      await store.releaseReadPages();
    }
  }
  // The pages read since the last release, let go of before the workers make their tables (the replay's peak of
  // memory): nothing reads the log after this.
  if (read > released) await store.releaseReadPages?.();
  return position;
}
