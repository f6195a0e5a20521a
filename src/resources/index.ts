/** Every resource the read API serves, and the table definitions they need. */
import type { TableDefs } from '../readmodel/model.js';
import { opportunities } from './opportunities.js';
import { shifts } from './shifts.js';

export const resources = { shifts, opportunities } as const;

export const tableDefs: TableDefs = {
  shift: shifts,
  opportunity: opportunities,
};
