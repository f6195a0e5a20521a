/** Sites (DESIGN.md's sites API): list with title and user.id filters, retrieve. */
import type { SiteRecord } from '../../projections/records.js';
import { byCreatedAt, syncOrderings, updatedAtParam } from './created-order.js';
import type { ResourceDef } from '../query/resource.js';
import { formatTimestamp } from '../time.js';

/** A site as the API shows it (reads, and the answer to bulk-create). */
export const siteBody = (s: SiteRecord) => ({
  id: s.id,
  title: s.title,
  address: s.address,
  created_at: formatTimestamp(s.created_at),
  updated_at: formatTimestamp(s.updated_at),
  users_count: s.user_ids.length,
});

export const sites: ResourceDef<'site'> = {
  kind: 'site',
  path: 'sites',
  endpoints: { search: false, retrieve: true, filteredList: true },
  ...byCreatedAt,
  orderings: syncOrderings,
  symbols: { title: (s) => s.title.trim().toLowerCase() },
  params: [
    { name: 'title', type: 'text', symbol: 'title' },
    { name: 'user.id', type: 'uuid', value: (s) => s.user_ids },
    updatedAtParam,
  ],
  json: (site) => JSON.stringify(siteBody(site)),
  nests: [],
};
