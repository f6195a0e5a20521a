/** Every resource the read API serves, and the table definitions they need. */
import type { TableDefs } from '../readmodel/model.js';
import { categories } from './categories.js';
import { formSubmissions } from './form-submissions.js';
import { opportunities } from './opportunities.js';
import { profiles } from './profiles.js';
import { reservations } from './reservations.js';
import { sequences, userSequences } from './sequences.js';
import { shifts } from './shifts.js';
import { sites } from './sites.js';

export const resources = {
  shifts,
  opportunities,
  profiles,
  reservations,
  formSubmissions,
  sequences,
  userSequences,
  sites,
} as const;

export const tableDefs: TableDefs = {
  category: categories,
  shift: shifts,
  opportunity: opportunities,
  profile: profiles,
  reservation: reservations,
  formsubmission: formSubmissions,
  sequence: sequences,
  usersequence: userSequences,
  site: sites,
};
