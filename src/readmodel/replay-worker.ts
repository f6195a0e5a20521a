/**
 * A replay worker (a thread of `vm-api rebuild`): folds the whole log, but
 * only the events of the institutions assigned to it, into a model of its
 * own, and hands back that model's snapshot, encoded a piece at a time (its
 * memory transferred, not copied; the next once the last is written), after
 * its change feed entries in batches as it goes. It writes nothing.
 */
import { once } from 'node:events';
import { parentPort, workerData } from 'node:worker_threads';
import { startOfLog } from '../eventstore/port.js';
import { tableDefs } from '../resources/index.js';
import { openEventStore } from '../runtime.js';
import { EventFolder } from './folder.js';
import { ReadModel } from './model.js';
import { ownedBy } from './partition.js';
import { encodeSnapshot } from './persistence.js';
import { replayLog } from './replay.js';
import { FeedWriter } from './change-feed.js';
import { ownBuffer, type ReplayFeed, type ReplayPiece, type ReplayProgress, type ReplayReleasing, type ReplayResult, type ReplayTask } from './replay-messages.js';

const PROGRESS_EVERY = 20_000;

const task = workerData as ReplayTask;
const store = openEventStore(task.config);
try {
  const model = new ReadModel(tableDefs);
  const takes = ownedBy(task.index, new Map(task.assignment), task.workers);
  // The events read so far, every PROGRESS_EVERY (how far the replay is, for whoever waits on it), and the log's
  // pages let go of every `releaseEvery` (with every other worker's: see ReplayReleasing).
  let reported = 0;
  let released = 0;
  const onRead = async (read: number) => {
    if (read - reported >= PROGRESS_EVERY) {
      reported = read;
      parentPort!.postMessage({ read } satisfies ReplayProgress);
    }
    if (task.releaseEvery === 0 || read - released < task.releaseEvery) return;
    released = read;
    await store.releaseReadPages?.(async () => {
      parentPort!.postMessage({ releasing: read } satisfies ReplayReleasing);
      await once(parentPort!, 'message');
    });
  };
  // The change feed's entries of this worker's institutions, in batches (this thread's parent writes them as they come).
  const feed = new FeedWriter(async (entries) => parentPort!.postMessage({ feed: entries } satisfies ReplayFeed));
  const { position, applied } = await replayLog(store, model, new EventFolder(model), startOfLog, task.head, { takes, onRead, feed: feed.add });
  await feed.done();
  // The snapshot a piece at a time, each encoded once the last is written: never all of it beside the model.
  const send = async (piece: ReplayPiece) => {
    parentPort!.postMessage(piece, [piece.buffer]);
    await once(parentPort!, 'message');
  };
  const { tables, chunks } = encodeSnapshot(model.byKind(), model.savedTables());
  for (const { kind, institution, buffer } of tables) await send({ table: { kind, institution }, buffer: ownBuffer(buffer) });
  for (const { kind, records, buffer } of chunks) await send({ chunk: { kind, records }, buffer: ownBuffer(buffer) });
  parentPort!.postMessage({ position, applied } satisfies ReplayResult);
} finally {
  await store.close();
}
