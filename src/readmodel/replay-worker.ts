/**
 * A replay worker (a thread of `vm-api rebuild`): folds the whole log, but
 * only the events of the institutions assigned to it, into a model of its
 * own, and hands back that model's snapshot, encoded (its memory
 * transferred, not copied), after its change feed entries in batches as it
 * goes. It writes nothing.
 */
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
import { packSnapshot, type ReplayFeed, type ReplayProgress, type ReplayResult, type ReplayTask } from './replay-messages.js';

const PROGRESS_EVERY = 20_000;

const task = workerData as ReplayTask;
const store = openEventStore(task.config);
try {
  const model = new ReadModel(tableDefs);
  const takes = ownedBy(task.index, new Map(task.assignment), task.workers);
  // The events read so far, every PROGRESS_EVERY (how far the replay is, for whoever waits on it).
  let reported = 0;
  const onRead = (read: number) => {
    if (read - reported < PROGRESS_EVERY) return;
    reported = read;
    parentPort!.postMessage({ read } satisfies ReplayProgress);
  };
  // The change feed's entries of this worker's institutions, in batches (this thread's parent writes them as they come).
  const feed = new FeedWriter(async (entries) => parentPort!.postMessage({ feed: entries } satisfies ReplayFeed));
  const { position, applied } = await replayLog(store, model, new EventFolder(model), startOfLog, task.head, { takes, onRead, feed: feed.add });
  await feed.done();
  const { buffers, snapshot } = packSnapshot(encodeSnapshot(model.byKind(), model.savedTables()));
  const result: ReplayResult = { position, applied, snapshot, buffers };
  parentPort!.postMessage(result, buffers);
} finally {
  await store.close();
}
