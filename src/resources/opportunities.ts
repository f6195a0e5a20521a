/** Opportunities (roles): declaration, search parameters and JSON. */
import type { ReadView } from '../../projections/projection.js';
import type { CategoryRecord, OpportunityRecord } from '../../projections/records.js';
import { categories } from './categories.js';
import { byCreatedAt, syncOrderings, updatedAtParam } from './created-order.js';
import type { ResourceDef } from '../query/resource.js';
import { FragmentCache, type JsonView, str, ts } from './json.js';

export function categoryJson(category: CategoryRecord | undefined): string {
  if (!category) return 'null';
  return `{"id":${str(category.id)},"title":${str(category.title)},"description":${str(category.description)}}`;
}

export function shareOpportunityUrl(opportunity: OpportunityRecord, view: ReadView): string | null {
  if (opportunity.status !== 1) return null;
  const base = view.get('institution', opportunity.institution_id)?.share_base_url ?? '';
  return `${base}/opportunities/${opportunity.id}`;
}

const nests = ['category', 'institution'] as const;
const deps = (o: OpportunityRecord, view: ReadView) => [
  view.get('category', o.category_id),
  view.get('institution', o.institution_id),
];

const withCreatedAt = new FragmentCache<OpportunityRecord, string>({
  nests,
  deps,
  build: (opportunity, view) =>
    `{"id":${str(opportunity.id)},"created_at":${ts(opportunity.created_at)},` +
    `"category":${categoryJson(view.get('category', opportunity.category_id))},` +
    `"title":${str(opportunity.title)},"description":${str(opportunity.description)},` +
    `"share_opportunity_url":${str(shareOpportunityUrl(opportunity, view))}}`,
});

/** An opportunity as search results and shifts show it (with created_at). */
export const opportunityJson = (opportunity: OpportunityRecord, view: JsonView): string =>
  withCreatedAt.get(opportunity, view);

export const opportunities: ResourceDef<'opportunity'> = {
  kind: 'opportunity',
  path: 'opportunities',
  endpoints: { search: true, retrieve: true, filteredList: false },
  ...byCreatedAt,
  columns: { ...byCreatedAt.columns, status: (o) => o.status },
  symbols: {
    category: (o) => o.category_id,
    title: (o) => o.title.toLowerCase(),
    description: (o) => o.description.toLowerCase(),
  },
  params: [
    { name: 'id', type: 'uuid', primaryKey: true },
    { name: 'title', type: 'text', symbol: 'title' },
    { name: 'description', type: 'text', symbol: 'description' },
    { name: 'status', type: 'choice', choices: [0, 1, 2], column: 'status' },
    { name: 'created_at', type: 'timestamp', range: true, column: 'created' },
    { name: 'category.id', aliases: ['category_id'], type: 'uuid', symbol: 'category' },
    { name: 'category.title', aliases: ['category_title'], type: 'text', through: { symbol: 'category', table: () => categories, param: 'title' } },
    updatedAtParam,
  ],
  orderings: syncOrderings,
  json: opportunityJson,
  nests: ['category', 'institution'],
};
