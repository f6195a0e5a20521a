/** Every projection of the read model, in the order their changes apply. */
import { categories } from './categories.js';
import { institutions } from './institutions.js';
import { opportunities } from './opportunities.js';
import { customFields, profiles } from './profiles.js';
import type { Projection } from './projection.js';
import { reservations } from './reservations.js';
import { shifts } from './shifts.js';

export const projections: readonly Projection[] = [
  institutions,
  categories,
  opportunities,
  shifts,
  customFields,
  profiles,
  reservations,
];
