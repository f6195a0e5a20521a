/**
 * What a projection is: for each event type it handles, a pure function of
 * the read model as it stood before the event and the event's data, giving
 * the records to write (or delete, with `record: null`). No I/O, no mutation.
 */
import type { EventData, EventType } from '../src/events/catalog.js';
import type { Position } from '../src/eventstore/port.js';
import type { Kind, Records } from './records.js';

export interface ReadView {
  get<K extends Kind>(kind: K, id: string): Records[K] | undefined;
  /** The ids of a shift's reservations (those of other institutions included: `get` leaves them out). */
  reservationsOf(shiftId: string): Iterable<string>;
}

export type Change = { [K in Kind]: { kind: K; id: string; record: Records[K] | null } }[Kind];

/** `at` is the event's occurred_at in microseconds; `position` its place in the log. */
export type Handler<T extends EventType> = (view: ReadView, data: EventData<T>, at: number, position: Position) => Change[];

export type Projection = { readonly name: string } & { readonly [T in EventType]?: Handler<T> };

export const put = <K extends Kind>(kind: K, record: Records[K]): Change =>
  ({ kind, id: record.id, record }) as Change;

export const remove = (kind: Kind, id: string): Change => ({ kind, id, record: null }) as Change;

/** Apply a partial update, leaving fields that are absent from it as they were. */
export function patch<R extends object, P extends object>(record: R, update: P, fields: readonly (keyof P & keyof R)[]): R {
  const next = { ...record };
  for (const f of fields) {
    const v = update[f];
    if (v !== undefined) (next as Record<keyof R, unknown>)[f] = v;
  }
  return next;
}
