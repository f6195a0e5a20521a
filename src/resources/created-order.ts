/**
 * How every list but shifts is ordered (DESIGN.md): by created_at, then id.
 * The column, its index and the default ordering, to spread into a
 * resource declaration, and the `ordering` values where a resource takes them.
 */
import type { OrderingDef } from '../query/resource.js';

const ascending: OrderingDef = { index: 'created', descending: false };
const descending: OrderingDef = { index: 'created', descending: true };

export const byCreatedAt = {
  columns: { created: (record: { readonly created_at: number }) => record.created_at },
  indexes: [{ name: 'created', keys: ['created'] }],
  orderings: {} as Readonly<Record<string, OrderingDef>>,
  defaultOrdering: ascending,
};

/** `ordering=created_at` and `ordering=-created_at`. */
export const createdAtOrderings: Readonly<Record<string, OrderingDef>> = { created_at: ascending, '-created_at': descending };
