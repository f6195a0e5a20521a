/**
 * A replay worker (a thread of `vm-api rebuild`): folds the events its
 * parent sends it — those of the institutions assigned to it, read from the
 * log by the parent — into a model of its own, then hands back that model's
 * snapshot, encoded a piece at a time (its memory transferred, not copied;
 * the next once the last is written), after its change feed entries in
 * batches as it goes. It neither reads the log nor writes anything.
 */
import { on } from 'node:events';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { parentPort, workerData } from 'node:worker_threads';
import { startOfLog } from '../eventstore/port.js';
import { tableDefs } from '../resources/index.js';
import { EventFolder, type FoldedEvent } from './folder.js';
import { ReadModel } from './model.js';
import { ownedBy } from './partition.js';
import { encodeSnapshot } from './persistence.js';
import { replay } from './replay.js';
import { FeedWriter } from './change-feed.js';
import { ShardedMap } from './sharded-map.js';
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
async function* sent(): AsyncGenerator<readonly FoldedEvent[]> {
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
// A replay answers no requests: its maps are made whole (see ShardedMap.splitting).
ShardedMap.splitting = false;
// Its events come as copies (a message), not as slices of what LMDB read: nothing to copy again.
const model = new ReadModel(tableDefs, Date.now, false);
// Issued keys of every institution come too: they count for the key ledger, and are folded only by their own worker.
const takes = ownedBy(task.index, new Map(task.assignment), task.workers);
// The change feed's entries of this worker's institutions, in batches (this thread's parent writes them as they come).
const feed = new FeedWriter(async (entries) => parentPort!.postMessage({ feed: entries } satisfies ReplayFeed));
const { applied } = await replay(sent(), model, new EventFolder<FoldedEvent>(model), startOfLog, { takes, feed: feed.add, recordsOnly: true });
await feed.done();
// The snapshot a piece at a time, each encoded once the last is written: never all of it beside the model.
const send = async (piece: ReplayPiece) => {
  parentPort!.postMessage(piece, [piece.buffer.buffer]);
  await messages.next();
};
/**
 * A full garbage collection, now: V8 gives no other way to ask for one than its `gc` (--expose-gc, set here for
 * contexts made from now on). The fold leaves its garbage in the old generation (a worker's heap at the fold's end:
 * 460 MB used in one rebuild of the same log, 625 MB in another), and making a large table leaves its sort's arrays,
 * saving it copies of its indexes and columns: the next kind's tables would be made on top of them.
 */
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;
/** Tables of a kind with this many rows (in all) leave garbage worth a collection (one takes a few hundred ms). */
const LARGE_ROWS = 100_000;
collectGarbage();
// Each kind's tables made only when their turn comes, and let go of once sent.
const { tables, chunks } = encodeSnapshot(
  model.byKind(),
  model.tablesToSaveOnce((rows) => {
    if (rows >= LARGE_ROWS) collectGarbage();
  }),
);
// (a table is encoded in memory of its own: sent as it is)
for (const table of tables) if (table) await send({ table: { kind: table.kind, institution: table.institution }, buffer: table.buffer });
for (const chunk of chunks) if (chunk) await send({ chunk: { kind: chunk.kind, records: chunk.records }, buffer: ownBuffer(chunk.buffer) });
parentPort!.postMessage({ position: end!.end, applied } satisfies ReplayResult);
await messages.return?.();
