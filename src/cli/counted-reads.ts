/** A store whose reads of the whole log are counted: the progress of a replay that reads the log through it. */
import type { EventStore, Position, RecordedEvent } from '../eventstore/port.js';

/**
 * `store` as it is, but telling `onRead` how many events its `readAll` has handed out so far. A one-thread rebuild
 * (the projector's replay) says nothing of how far it is; the events it has read are how far.
 */
export function countingReads(store: EventStore, onRead: (read: number) => void): EventStore {
  let read = 0;
  const readAll = async (from: Position, maxCount: number): Promise<RecordedEvent[]> => {
    const events = await store.readAll(from, maxCount);
    read += events.length;
    onRead(read);
    return events;
  };
  return new Proxy(store, {
    get(target, key) {
      if (key === 'readAll') return readAll;
      const value: unknown = Reflect.get(target, key, target);
      // The store's own methods run on the store itself (its fields are its own, not the proxy's).
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
