/** Shifts: declaration, search parameters, indexes, orderings and JSON. */
import type { ShiftRecord } from '../../projections/records.js';
import { syncOrderings, updatedAtParam } from './created-order.js';
import type { ResourceDef } from '../query/resource.js';
import { timeOfDay } from '../time.js';
import { type JsonView, str, text, ts } from './json.js';
import { opportunities, opportunityJson } from './opportunities.js';

function shiftJson(shift: ShiftRecord, view: JsonView): string {
  const opportunity = view.get('opportunity', shift.opportunity_id);
  const base = view.get('institution', shift.institution_id)?.share_base_url ?? '';
  const title = text(shift.title);
  const description = text(shift.description);
  return (
    `{"id":${str(shift.id)},"created_at":${ts(shift.created_at)},` +
    `"shift_start_at":${ts(shift.shift_start_at)},"shift_end_at":${ts(shift.shift_end_at)},` +
    `"spots":${shift.spots},"spots_reserved":${shift.spots_reserved},` +
    `"spots_available":${Math.max(shift.spots - shift.spots_reserved, 0)},` +
    `"opportunity":${opportunity ? opportunityJson(opportunity, view) : 'null'},` +
    `"shift_location":${text(shift.location)},"shift_title":${title},` +
    `"shift_description":${description},"share_shift_url":${str(`${base}/shifts/${shift.id}`)},` +
    `"title":${title},"description":${description}}`
  );
}

export const shifts: ResourceDef<'shift'> = {
  kind: 'shift',
  path: 'shifts',
  endpoints: { search: true, retrieve: true, filteredList: false },
  include: (s) => !s.removed,
  columns: {
    start: (s) => s.shift_start_at,
    created: (s) => s.created_at,
    updated: (s) => s.updated_at,
    end: (s) => s.shift_end_at,
    spots: (s) => s.spots,
    start_time: (s) => timeOfDay(s.shift_start_at),
    end_time: (s) => timeOfDay(s.shift_end_at),
  },
  symbols: {
    opportunity: (s) => s.opportunity_id,
    title: (s) => s.title.toLowerCase(),
    description: (s) => s.description?.toLowerCase() ?? null,
  },
  // Each index sorts by its column, then by the default order (start, created, id).
  indexes: [
    { name: 'start', keys: ['start', 'created'] },
    { name: 'created', keys: ['created', 'start'] },
    { name: 'end', keys: ['end', 'start', 'created'] },
    { name: 'spots', keys: ['spots', 'start', 'created'] },
    { name: 'updated', keys: ['updated', 'start', 'created'] },
    { name: 'start_time', keys: ['start_time', 'start', 'created'] },
    { name: 'end_time', keys: ['end_time', 'start', 'created'] },
    // The shifts of one opportunity (or title, or description), in start
    // order: within a date window, one block of the index.
    { name: 'opportunity', keys: ['opportunity', 'start', 'created'] },
    { name: 'title', keys: ['title', 'start', 'created'] },
    { name: 'description', keys: ['description', 'start', 'created'] },
  ],
  params: [
    { name: 'id', type: 'uuid', primaryKey: true },
    { name: 'title', aliases: ['shift_title'], type: 'text', symbol: 'title' },
    { name: 'description', aliases: ['shift_description'], type: 'text', symbol: 'description' },
    { name: 'created_at', type: 'timestamp', range: true, column: 'created' },
    { name: 'created_date', aliases: ['created_on'], type: 'date', range: true, column: 'created' },
    { name: 'shift_date', aliases: ['date'], type: 'date', range: true, column: 'start' },
    { name: 'shift_start_at', type: 'timestamp', range: true, column: 'start' },
    { name: 'shift_start_time', aliases: ['start_time'], type: 'time', range: true, column: 'start_time' },
    { name: 'shift_end_at', type: 'timestamp', range: true, column: 'end' },
    { name: 'shift_end_time', aliases: ['end_time'], type: 'time', range: true, column: 'end_time' },
    { name: 'spots', type: 'integer', range: true, column: 'spots' },
    updatedAtParam,
    { name: 'opportunity.id', aliases: ['opportunity_id'], type: 'uuid', symbol: 'opportunity' },
    // Through the shift's opportunity, as it is now.
    { name: 'opportunity.title', aliases: ['opportunity_title'], type: 'text', through: { symbol: 'opportunity', table: () => opportunities, param: 'title' } },
    { name: 'category.id', aliases: ['category_id'], type: 'uuid', through: { symbol: 'opportunity', table: () => opportunities, param: 'category.id' } },
    { name: 'category.title', aliases: ['category_title'], type: 'text', through: { symbol: 'opportunity', table: () => opportunities, param: 'category.title' } },
  ],
  orderings: {
    ...syncOrderings,
    shift_start_at: { index: 'start', descending: false },
    '-shift_start_at': { index: 'start', descending: true },
    shift_end_at: { index: 'end', descending: false },
    '-shift_end_at': { index: 'end', descending: true },
    spots: { index: 'spots', descending: false },
    '-spots': { index: 'spots', descending: true },
  },
  defaultOrdering: { index: 'start', descending: false },
  json: shiftJson,
  nests: ['opportunity', 'category', 'institution'],
};
