/**
 * Categories have no endpoint of their own; their table is what the
 * relation filters on a category's title search (`category.title` of
 * opportunities, and through them of shifts).
 */
import type { CategoryRecord } from '../../projections/records.js';
import type { ParamDef } from '../query/resource.js';
import type { TableDef } from '../readmodel/model.js';
import { byCreatedAt } from './created-order.js';

export const categories: TableDef<CategoryRecord> & { readonly kind: 'category'; readonly params: readonly ParamDef<CategoryRecord>[] } = {
  kind: 'category',
  ...byCreatedAt,
  symbols: { title: (c) => c.title.toLowerCase() },
  params: [
    { name: 'id', type: 'uuid', primaryKey: true },
    { name: 'title', type: 'text', symbol: 'title' },
  ],
};
