/**
 * `vm-api rebuild` on several cores: the institutions are spread over
 * replay workers (threads), each of which reads the whole log but folds
 * only the events of its own institutions (a projection never reads
 * across institutions, see folder.ts), builds their tables and encodes
 * their snapshot; this thread writes their change feed entries as they
 * come, then every worker's part as one snapshot, in one transaction. A
 * worker that fails fails the rebuild before its snapshot is written (the
 * feed entries written by then are cleared with the read model at the
 * next start: none of it is current without a snapshot).
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
import { type ReplayFeed, type ReplayProgress, type ReplayResult, type ReplayTask, unpackSnapshot } from './replay-messages.js';
import { FeedWriter } from './change-feed.js';

/**
 * A replay worker's young generation, in MB. A replay makes a record or
 * more per event, each of which survives a minor collection or two: with
 * V8's default the two workers of a 1.5M-event replay spent 9 s in minor
 * collections, with 64 MB 5 s (19 s against 23 s in all; 48 MB was as
 * slow as the default, 96 MB no faster than 64).
 */
const YOUNG_GENERATION_MB = 64;

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

function runWorker(task: ReplayTask, started: Worker[], onRead: (read: number) => void, feed: FeedWriter): Promise<ReplayResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./replay-worker.js', import.meta.url), {
      workerData: task,
      resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
    });
    started.push(worker);
    // Progress until the result; the result is whole once sent: the worker's heap is let go of while this thread writes.
    worker.on('message', (message: ReplayProgress | ReplayFeed | ReplayResult) => {
      if ('snapshot' in message) resolve(message);
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
): Promise<{ applied: number; position: Position }> {
  const head = await store.head();
  if (comparePositions(head, startOfLog) <= 0) return { applied: 0, position: startOfLog };
  const assignment = [...assignInstitutions(await sampleInstitutions(store, head), workers)];
  const started: Worker[] = [];
  const reads = new Array<number>(workers).fill(0);
  // Every worker's change feed entries, written as they come (the snapshot, written last, makes them count).
  const feed = new FeedWriter((entries) => disk.appendFeed(entries));
  let results: ReplayResult[];
  try {
    results = await Promise.all(
      Array.from({ length: workers }, (_, index) =>
        runWorker(
          { config, head, assignment, workers, index },
          started,
          (read) => {
            reads[index] = read;
            onProgress?.(Math.min(...reads), head);
          },
          feed,
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
  if (comparePositions(position, startOfLog) > 0) await disk.writeEncodedSnapshot(results.map(unpackSnapshot), position);
  return { applied, position };
}
