/**
 * How every list but shifts is ordered (DESIGN.md): by created_at, then id.
 * The column, its index and the default ordering, to spread into a
 * resource declaration, and the `ordering` values where a resource takes them.
 * Also the updated_at column and index every table keeps for sync
 * (`updated_at` filters, `ordering=updated_at`; ties in the default order).
 */
import type { OrderingDef, RangeParam } from '../query/resource.js';

const ascending: OrderingDef = { index: 'created', descending: false };
const descending: OrderingDef = { index: 'created', descending: true };

interface Stamped {
  readonly created_at: number;
  readonly updated_at: number;
}

export const byCreatedAt = {
  columns: { created: (record: Stamped) => record.created_at, updated: (record: Stamped) => record.updated_at },
  indexes: [
    { name: 'created', keys: ['created'] },
    { name: 'updated', keys: ['updated', 'created'] },
  ],
  orderings: {} as Readonly<Record<string, OrderingDef>>,
  defaultOrdering: ascending,
};

/** `ordering=created_at` and `ordering=-created_at`. */
const createdAtOrderings: Readonly<Record<string, OrderingDef>> = { created_at: ascending, '-created_at': descending };

/** `updated_at` with the range suffixes: what changed since (a record's own events and the derived counts it shows move it). */
export const updatedAtParam: RangeParam<never> = { name: 'updated_at', type: 'timestamp', range: true, column: 'updated' };

/** `ordering=updated_at` and `-updated_at`, ties in the default order. */
const updatedAtOrderings: Readonly<Record<string, OrderingDef>> = {
  updated_at: { index: 'updated', descending: false },
  '-updated_at': { index: 'updated', descending: true },
};

/** `ordering` created_at and updated_at, each both ways. */
export const syncOrderings: Readonly<Record<string, OrderingDef>> = { ...createdAtOrderings, ...updatedAtOrderings };
