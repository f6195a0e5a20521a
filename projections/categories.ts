/** Categories (the top of Category > Opportunity > Shift). */
import { patch, put, type Projection } from './projection.js';

export const categories: Projection = {
  name: 'categories',
  CategoryCreated: (_view, d, at) => [
    put('category', {
      id: d.category_id,
      institution_id: d.institution_id,
      title: d.title,
      description: d.description,
      created_at: at,
      updated_at: at,
    }),
  ],
  CategoryUpdated: (view, d, at) => {
    const category = view.get('category', d.category_id);
    if (!category) return [];
    return [put('category', { ...patch(category, d, ['title', 'description']), updated_at: at })];
  },
};
