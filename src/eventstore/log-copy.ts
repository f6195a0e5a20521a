/**
 * A log copied event by event into an empty one: same events, same order,
 * so the same positions, streams and revisions. What `vm-api repair-log`
 * uses when the embedded log's files can no longer be written (see the
 * README's "Known problems") but every event still reads back.
 */
import { type EventStore, type Position, type StreamAppend, startOfLog } from './port.js';

/** Events appended per transaction of the copy. */
const CHUNK = 20_000;

export class LogCopyError extends Error {}

/** Copy every event of `from` into the empty `to`; `onProgress` is told the events copied and the head. */
export async function copyLog(from: EventStore, to: EventStore, onProgress?: (copied: number, head: number) => void): Promise<number> {
  if ((await to.head()).commit >= 0n) throw new LogCopyError('the log copied into must be empty');
  const head = Number((await from.head()).commit);
  let position: Position = startOfLog;
  let copied = 0;
  for (;;) {
    const batch = await from.readAll(position, CHUNK);
    if (batch.length === 0) break;
    const appends: StreamAppend[] = batch.map((e) => ({ stream: e.stream, events: [{ id: e.id, type: e.type, data: e.data }] }));
    const last = (await to.appendMany(appends)).position;
    position = batch[batch.length - 1]!.position;
    copied += batch.length;
    // Same order into an empty log: the same positions, unless an event was left out (an id twice).
    if (last?.commit !== position.commit) {
      throw new LogCopyError(`the copy is at position ${last?.commit ?? 'none'} where the log is at ${position.commit}: an event id appears twice`);
    }
    onProgress?.(copied, head);
  }
  return copied;
}
