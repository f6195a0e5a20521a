/**
 * A replay: events folded a batch at a time (the log's, from a position up
 * to a head, or those a replay worker is sent), into a model whose tables
 * are built once at the end (nothing reads it meanwhile). No writes: the
 * caller persists the result.
 */
import { comparePositions, type EventStore, type Position, type RecordedEvent } from '../eventstore/port.js';
import type { EventFolder, FoldedEvent, FoldOptions } from './folder.js';
import type { ReadModel } from './model.js';

/**
 * Events read from the log at a time when replaying: few enough that a
 * batch's decoded events die young (25,000 outlived minor collections and
 * were copied into the old generation: 30 s for a replay of 1.5M events
 * against 23 s with 1,000, on two threads).
 */
const REPLAY_BATCH = 1_000;

export interface Replayed {
  /** The position of the last event folded (`from` if none). */
  position: Position;
  /** Events applied. */
  applied: number;
}

/** The log's events after `from` up to `head` and no further (though the log may have grown since), a batch at a time. */
export async function* eventsUpTo(store: EventStore, from: Position, head: Position, onRead?: (read: number) => void): AsyncGenerator<readonly RecordedEvent[]> {
  let position = from;
  let read = 0;
  while (comparePositions(position, head) < 0) {
    let events = await store.readAll(position, REPLAY_BATCH);
    if (events.length > 0 && comparePositions(events[events.length - 1]!.position, head) > 0) {
      events = events.slice(0, events.findIndex((event) => comparePositions(event.position, head) > 0));
    }
    if (events.length === 0) return;
    read += events.length;
    onRead?.(read);
    yield events;
    position = events[events.length - 1]!.position;
  }
}

export interface ReplayOptions extends Pick<FoldOptions, 'takes' | 'feed'> {
  /**
   * Leave the tables unmade (the model keeps records only): for a model that is saved and let go of, whose tables
   * `savedTablesOnce` makes a kind at a time.
   */
  recordsOnly?: boolean;
}

/** Fold these batches of events (those after `from`), then build the tables (unless `recordsOnly`). */
export async function replay<E extends FoldedEvent>(
  batches: AsyncIterable<readonly E[]>,
  model: ReadModel,
  folder: EventFolder<E>,
  from: Position,
  { recordsOnly = false, ...options }: ReplayOptions = {},
): Promise<Replayed> {
  let position = from;
  let applied = 0;
  model.deferTables();
  for await (const events of batches) {
    const folded = folder.fold(events, position, options);
    if (!folded) continue;
    applied += folded.applied;
    position = folded.last;
  }
  if (!recordsOnly) model.buildTables();
  return { position, applied };
}
