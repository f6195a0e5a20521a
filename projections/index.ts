/** Every projection of the read model, in the order their changes apply. */
import { categories } from './categories.js';
import { institutions } from './institutions.js';
import { opportunities } from './opportunities.js';
import { formSubmissions } from './forms.js';
import { customFields, profiles } from './profiles.js';
import type { Projection } from './projection.js';
import { reservations } from './reservations.js';
import { sequences, userSequences } from './sequences.js';
import { shifts } from './shifts.js';
import { sites } from './sites.js';
import { webhooks } from './webhooks.js';

export const projections: readonly Projection[] = [
  institutions,
  categories,
  opportunities,
  shifts,
  customFields,
  profiles,
  reservations,
  formSubmissions,
  sequences,
  userSequences,
  sites,
  webhooks,
];
