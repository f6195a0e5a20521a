/**
 * `vm-api rebuild` on several cores: the institutions are spread over
 * replay workers (threads), each of which reads the whole log but folds
 * only the events of its own institutions (a projection never reads
 * across institutions, see folder.ts), builds their tables and encodes
 * their snapshot; this thread writes their change feed entries as they
 * come, then each worker's snapshot a piece at a time as it comes (a
 * worker encodes the next once the last is written), and the checkpoint
 * last. A worker that fails fails the rebuild before the checkpoint is
 * written (what was written by then is cleared with the read model at the
 * next start: none of it is current without a checkpoint).
 *
 * Institutions are weighed by a sample of the embedded log's events, so
 * that the heaviest do not share a worker; on EventStoreDB (whose
 * positions cannot be sampled) they are spread by a hash of their ids.
 */
import { Worker } from 'node:worker_threads';
import type { Config } from '../config.js';
import { comparePositions, type EventStore, type Position, startOfLog } from '../eventstore/port.js';
import { institutionOfEvent } from './folder.js';
import { assignInstitutions } from './partition.js';
import type { ReadModelStore } from './persistence.js';
import {
  REPLAY_MORE,
  REPLAY_REOPEN,
  type ReplayFeed,
  type ReplayPiece,
  type ReplayProgress,
  type ReplayReleasing,
  type ReplayResult,
  type ReplayTask,
} from './replay-messages.js';
import { FeedWriter } from './change-feed.js';
import type { Kind } from '../../projections/records.js';

/**
 * A replay worker's young generation, in MB. A replay makes a record or
 * more per event, each of which survives a minor collection or two: with
 * V8's default the two workers of a 1.5M-event replay spent 9 s in minor
 * collections, with 64 MB 5 s (19 s against 23 s in all; 48 MB was as
 * slow as the default, 96 MB no faster than 64).
 */
const YOUNG_GENERATION_MB = 64;

/**
 * Events each worker reads between two releases of the log's pages. The workers read the whole log through one
 * mapping of it, which kept every page they had read (and the kernel maps the pages around each one read): a
 * rebuild of 1.77M events had 1.2 GB of it resident at the end. It costs time: at a release the workers wait for
 * each other, and a log whose first half is mostly one worker's institutions keeps the other waiting. Rebuilds of
 * 1.77M events, alternated: without releases 17.8–18.9 s, VmHWM 2.97–3.18 GB (mapped 1.21 GB); every 200,000
 * events 20.0–20.4 s, 2.48–2.50 GB (605 MB); every 50,000 21.3–21.7 s, 2.06–2.08 GB (305 MB).
 */
export const RELEASE_EVERY = 50_000;

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

function runWorker(
  task: ReplayTask,
  started: Worker[],
  onRead: (read: number) => void,
  feed: FeedWriter,
  write: (piece: ReplayPiece) => Promise<void>,
  releasing: (worker: Worker) => Promise<void>,
): Promise<ReplayResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./replay-worker.js', import.meta.url), {
      workerData: task,
      resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
    });
    started.push(worker);
    // Progress and feed entries until the snapshot's pieces, each written before the worker makes the next; then the result.
    worker.on('message', (message: ReplayProgress | ReplayReleasing | ReplayFeed | ReplayPiece | ReplayResult) => {
      if ('buffer' in message) write(message).then(() => worker.postMessage(REPLAY_MORE), reject);
      else if ('releasing' in message) releasing(worker).catch(reject);
      else if ('position' in message) resolve(message);
      else if ('feed' in message) feed.addBatch(message.feed);
      else onRead(message.read);
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`replay worker ${task.index} exited with code ${code} before it was done`)));
  });
}

/**
 * Replay the whole log into the (cleared) read model on disk with
 * `workers` threads; the events applied and the position reached.
 */
export async function replayInParallel(
  config: Pick<Config, 'DATA_DIR' | 'EVENTSTORE_URL'>,
  store: EventStore,
  disk: ReadModelStore,
  workers: number,
  /** Told how far the replay is: the events read by the slowest worker, and the head it replays to. */
  onProgress?: (read: number, head: Position) => void,
  /** Events each worker reads between two releases of the log's pages. */
  releaseEvery = RELEASE_EVERY,
): Promise<{ applied: number; position: Position }> {
  const head = await store.head();
  if (comparePositions(head, startOfLog) <= 0) return { applied: 0, position: startOfLog };
  const assignment = [...assignInstitutions(await sampleInstitutions(store, head), workers)];
  const started: Worker[] = [];
  const reads = new Array<number>(workers).fill(0);
  // Every worker's change feed entries, written as they come (the snapshot, written last, makes them count).
  const feed = new FeedWriter((entries) => disk.appendFeed(entries));
  // A kind's chunks are numbered as they come: each institution's in its worker's order.
  const chunkNumbers = new Map<Kind, number>();
  let records = 0;
  const write = async (piece: ReplayPiece) => {
    const buffer = Buffer.from(piece.buffer);
    if ('table' in piece) return disk.putSnapshotTable(piece.table.kind, piece.table.institution, buffer);
    const { kind } = piece.chunk;
    const number = chunkNumbers.get(kind) ?? 0;
    chunkNumbers.set(kind, number + 1);
    records += piece.chunk.records;
    return disk.putSnapshotChunk(kind, number, buffer);
  };
  // Each worker closes the log every `releaseEvery` events read; once all have, this thread lets go of its pages too.
  let closed: Worker[] = [];
  const releasing = async (worker: Worker) => {
    closed.push(worker);
    if (closed.length < workers) return;
    const reopening = closed;
    closed = [];
    await store.releaseReadPages!();
    for (const each of reopening) each.postMessage(REPLAY_REOPEN);
  };
  let results: ReplayResult[];
  try {
    results = await Promise.all(
      Array.from({ length: workers }, (_, index) =>
        runWorker(
          { config, head, assignment, workers, index, releaseEvery: store.releaseReadPages === undefined ? 0 : releaseEvery },
          started,
          (read) => {
            reads[index] = read;
            onProgress?.(Math.min(...reads), head);
          },
          feed,
          write,
          releasing,
        ),
      ),
    );
  } catch (error) {
    await Promise.all(started.map((worker) => worker.terminate()));
    await feed.done().catch(() => undefined);
    throw error;
  }
  await feed.done();
  const { position } = results[0]!;
  if (results.some((result) => comparePositions(result.position, position) !== 0)) {
    throw new Error('replay workers stopped at different positions of the log');
  }
  const applied = results.reduce((sum, result) => sum + result.applied, 0);
  if (comparePositions(position, startOfLog) > 0) await disk.finishSnapshot(records, position);
  return { applied, position };
}
