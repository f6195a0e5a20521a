/** Every resource the read API serves, and the table definitions they need. */
import type { TableDefs } from '../readmodel/model.js';
import type { IndexDef } from '../readmodel/sorted-index.js';
import { categories } from './categories.js';
import { formSubmissions } from './form-submissions.js';
import { opportunities } from './opportunities.js';
import { profiles } from './profiles.js';
import { reservations } from './reservations.js';
import { sequences, userSequences } from './sequences.js';
import { shifts } from './shifts.js';
import { sites } from './sites.js';

/** What `indexingFilters` reads of a filter: the column it constrains, if any (by code, relation or range). */
interface FilterColumns {
  readonly symbol?: string;
  readonly through?: { readonly symbol: string };
  readonly column?: string;
  readonly value?: unknown;
  readonly group?: string;
  readonly primaryKey?: boolean;
}

/**
 * The declaration with an index led by each column a filter constrains (the
 * code of a text or an id, a relation's ids, a status or a flag) that no
 * declared index leads, then by creation: such a filter is counted from two
 * binary searches and its rows are a block of that index, in the lists'
 * default order, instead of a scan of every record (a site's title among
 * 100,000 sites read each of them: 6–12 ms). Values a record holds several
 * of have postings instead, ids the row lookup.
 */
function indexingFilters<T extends { readonly indexes: readonly IndexDef[]; readonly params: readonly FilterColumns[] }>(def: T): T {
  const led = new Set(def.indexes.map((index) => index.keys[0]));
  const names = new Set(def.indexes.map((index) => index.name));
  const added: IndexDef[] = [];
  for (const param of def.params) {
    if (param.value !== undefined || param.group !== undefined || param.primaryKey) continue;
    const column = param.symbol ?? param.through?.symbol ?? param.column;
    if (column === undefined || led.has(column)) continue;
    led.add(column);
    const name = names.has(column) ? `${column}-filter` : column;
    names.add(name);
    added.push({ name, keys: [column, 'created'] });
  }
  return added.length === 0 ? def : { ...def, indexes: [...def.indexes, ...added] };
}

export const resources = {
  shifts,
  opportunities: indexingFilters(opportunities),
  profiles: indexingFilters(profiles),
  reservations,
  formSubmissions: indexingFilters(formSubmissions),
  sequences: indexingFilters(sequences),
  userSequences: indexingFilters(userSequences),
  sites: indexingFilters(sites),
} as const;

export const tableDefs: TableDefs = {
  category: categories,
  shift: resources.shifts,
  opportunity: resources.opportunities,
  profile: resources.profiles,
  reservation: resources.reservations,
  formsubmission: resources.formSubmissions,
  sequence: resources.sequences,
  usersequence: resources.userSequences,
  site: resources.sites,
};
