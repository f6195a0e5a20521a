/**
 * A replay worker (a thread of `vm-api rebuild`): folds the events its
 * parent sends it — those of the institutions assigned to it, read from the
 * log by the parent — into a model of its own, then hands back that model's
 * snapshot, encoded a piece at a time (its memory transferred, not copied;
 * the next once the last is written), after its change feed entries in
 * batches as it goes. It neither reads the log nor writes anything.
 */
import { on } from 'node:events';
import { parentPort, workerData } from 'node:worker_threads';
import { type RecordedEvent, startOfLog } from '../eventstore/port.js';
import { tableDefs } from '../resources/index.js';
import { EventFolder } from './folder.js';
import { ReadModel } from './model.js';
import { ownedBy } from './partition.js';
import { encodeSnapshot } from './persistence.js';
import { replay } from './replay.js';
import { FeedWriter } from './change-feed.js';
import {
  ownBuffer,
  type ReplayEnd,
  type ReplayEvents,
  type ReplayFeed,
  type ReplayFolded,
  type ReplayPiece,
  type ReplayResult,
  type ReplayTask,
} from './replay-messages.js';

const task = workerData as ReplayTask;
const messages = on(parentPort!, 'message') as AsyncIterableIterator<[ReplayEvents | ReplayEnd]>;
let end: ReplayEnd | undefined;
/** The batches the parent sends until the end, each said folded once the replay asks for the next. */
async function* sent(): AsyncGenerator<readonly RecordedEvent[]> {
  for (;;) {
    const { value, done } = await messages.next();
    if (done) throw new Error('the replay ended before its last events');
    const [message] = value;
    if ('end' in message) {
      end = message;
      return;
    }
    yield message.events;
    parentPort!.postMessage({ folded: true } satisfies ReplayFolded);
  }
}
const model = new ReadModel(tableDefs);
// Issued keys of every institution come too: they count for the key ledger, and are folded only by their own worker.
const takes = ownedBy(task.index, new Map(task.assignment), task.workers);
// The change feed's entries of this worker's institutions, in batches (this thread's parent writes them as they come).
const feed = new FeedWriter(async (entries) => parentPort!.postMessage({ feed: entries } satisfies ReplayFeed));
const { applied } = await replay(sent(), model, new EventFolder(model), startOfLog, { takes, feed: feed.add });
await feed.done();
// The snapshot a piece at a time, each encoded once the last is written: never all of it beside the model.
const send = async (piece: ReplayPiece) => {
  parentPort!.postMessage(piece, [piece.buffer]);
  await messages.next();
};
const { tables, chunks } = encodeSnapshot(model.byKind(), model.savedTables());
for (const { kind, institution, buffer } of tables) await send({ table: { kind, institution }, buffer: ownBuffer(buffer) });
for (const { kind, records, buffer } of chunks) await send({ chunk: { kind, records }, buffer: ownBuffer(buffer) });
parentPort!.postMessage({ position: end!.end, applied } satisfies ReplayResult);
await messages.return?.();
