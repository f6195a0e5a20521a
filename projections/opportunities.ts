/** Opportunities (roles), with their status. */
import { patch, put, type Projection } from './projection.js';

export const opportunities: Projection = {
  name: 'opportunities',
  OpportunityCreated: (_view, d, at) => [
    put('opportunity', {
      id: d.opportunity_id,
      institution_id: d.institution_id,
      category_id: d.category_id,
      title: d.title,
      description: d.description,
      status: d.status,
      created_at: at,
      updated_at: at,
    }),
  ],
  OpportunityUpdated: (view, d, at) => {
    const opportunity = view.get('opportunity', d.opportunity_id);
    if (!opportunity) return [];
    return [put('opportunity', { ...patch(opportunity, d, ['title', 'description', 'category_id']), updated_at: at })];
  },
  OpportunityStatusChanged: (view, d, at) => {
    const opportunity = view.get('opportunity', d.opportunity_id);
    if (!opportunity || opportunity.status === d.status) return [];
    return [put('opportunity', { ...opportunity, status: d.status, updated_at: at })];
  },
};
