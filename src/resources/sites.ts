/** Sites (DESIGN.md's sites API): list with title and user.id filters, retrieve. */
import type { SiteRecord } from '../../projections/records.js';
import type { ResourceDef } from '../query/resource.js';
import { str, ts } from './json.js';

const siteJson = (s: SiteRecord): string =>
  `{"id":${str(s.id)},"title":${str(s.title)},"address":${str(s.address)},"created_at":${ts(s.created_at)},` +
  `"updated_at":${ts(s.updated_at)},"users_count":${s.user_ids.length}}`;

export const sites: ResourceDef<'site'> = {
  kind: 'site',
  path: 'sites',
  endpoints: { search: false, retrieve: true, filteredList: true },
  columns: { created: (s) => s.created_at },
  indexes: [{ name: 'created', keys: ['created'] }],
  params: [
    { name: 'title', type: 'text', value: (s) => s.title.trim() },
    { name: 'user.id', type: 'uuid', value: (s) => s.user_ids },
  ],
  orderings: {},
  defaultOrdering: { index: 'created', descending: false },
  json: siteJson,
  nests: [],
};
