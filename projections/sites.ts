/** Sites and the profiles assigned to them. */
import { put, type Projection } from './projection.js';

export const sites: Projection = {
  name: 'sites',
  SiteCreated: (_view, d, at) => [
    put('site', {
      id: d.site_id,
      institution_id: d.institution_id,
      title: d.title,
      address: d.address ?? '',
      user_ids: [],
      created_at: at,
      updated_at: at,
    }),
  ],
  UserAssignedToSite: (view, d, at) => {
    const site = view.get('site', d.site_id);
    if (!site || site.user_ids.includes(d.user_id)) return [];
    return [put('site', { ...site, user_ids: [...site.user_ids, d.user_id], updated_at: at })];
  },
  UserUnassignedFromSite: (view, d, at) => {
    const site = view.get('site', d.site_id);
    if (!site || !site.user_ids.includes(d.user_id)) return [];
    return [put('site', { ...site, user_ids: site.user_ids.filter((u) => u !== d.user_id), updated_at: at })];
  },
};
