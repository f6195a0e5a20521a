/** Every resource the read API serves, and the table definitions they need. */
import type { TableDefs } from '../readmodel/model.js';
import { opportunities } from './opportunities.js';
import { profiles } from './profiles.js';
import { reservations } from './reservations.js';
import { shifts } from './shifts.js';

export const resources = { shifts, opportunities, profiles, reservations } as const;

export const tableDefs: TableDefs = {
  shift: shifts,
  opportunity: opportunities,
  profile: profiles,
  reservation: reservations,
};
