/**
 * Reservations: list, retrieve and search (the query behind an hours
 * report: by volunteer, shift, opportunity, category, when the shift
 * starts, status and logged hours), with the reduced shift, the user
 * summary and the opportunity.
 */
import type { ReadView } from '../../projections/projection.js';
import type { OpportunityRecord, ReservationRecord, ShiftRecord } from '../../projections/records.js';
import { byCreatedAt, syncOrderings, updatedAtParam } from './created-order.js';
import type { ResourceDef } from '../query/resource.js';
import { categoryJson, opportunities } from './opportunities.js';
import { json, type JsonView, str, ts } from './json.js';
import { userSummaryJson } from './users.js';

/** A shift as a reservation shows it. */
export function reducedShiftJson(shift: ShiftRecord | undefined): string {
  if (!shift) return 'null';
  return (
    `{"id":${str(shift.id)},"created_at":${ts(shift.created_at)},"shift_start_at":${ts(shift.shift_start_at)},` +
    `"shift_end_at":${ts(shift.shift_end_at)},"spots":${shift.spots},"shift_title":${str(shift.title)},` +
    `"shift_description":${str(shift.description)}}`
  );
}

/** An opportunity as reservations and form submissions show it: without created_at. */
export function plainOpportunityJson(opportunity: OpportunityRecord | undefined, view: ReadView): string {
  if (!opportunity) return 'null';
  return (
    `{"id":${str(opportunity.id)},"category":${categoryJson(view.get('category', opportunity.category_id))},` +
    `"title":${str(opportunity.title)},"description":${str(opportunity.description)}}`
  );
}

function reservationJson(r: ReservationRecord, view: JsonView): string {
  const shift = view.get('shift', r.shift_id);
  const opportunity = shift && view.get('opportunity', shift.opportunity_id);
  return (
    `{"id":${str(r.id)},"shift":${reducedShiftJson(shift)},"created_at":${ts(r.created_at)},"status":${r.status},` +
    `"logged_hours":${r.logged_hours},"arrival_time":${ts(r.arrival_time)},"departure_time":${ts(r.departure_time)},` +
    `"hours_approved_by":${json(r.hours_approved_by)},"user":${userSummaryJson(view.get('profile', r.user_id), view)},` +
    `"opportunity":${plainOpportunityJson(opportunity, view)}}`
  );
}

export const reservations: ResourceDef<'reservation'> = {
  kind: 'reservation',
  path: 'reservations',
  // The list takes updated_at and its orderings (for sync); the search takes everything.
  endpoints: { search: true, retrieve: true, filteredList: { params: ['updated_at'], orderings: Object.keys(syncOrderings) } },
  columns: {
    ...byCreatedAt.columns,
    start: (r) => r.shift_start_at,
    hours: (r) => r.logged_hours,
    status: (r) => r.status,
  },
  symbols: {
    user: (r) => r.user_id,
    shift: (r) => r.shift_id,
    opportunity: (r) => r.opportunity_id,
  },
  indexes: [
    ...byCreatedAt.indexes,
    { name: 'start', keys: ['start', 'created'] },
    { name: 'hours', keys: ['hours', 'created'] },
    { name: 'status', keys: ['status', 'created'] },
    { name: 'user', keys: ['user', 'created'] },
    { name: 'shift', keys: ['shift', 'created'] },
    { name: 'opportunity', keys: ['opportunity', 'created'] },
  ],
  defaultOrdering: byCreatedAt.defaultOrdering,
  orderings: {
    ...syncOrderings,
    shift_start_at: { index: 'start', descending: false },
    '-shift_start_at': { index: 'start', descending: true },
    logged_hours: { index: 'hours', descending: false },
    '-logged_hours': { index: 'hours', descending: true },
  },
  params: [
    { name: 'id', type: 'uuid', primaryKey: true },
    { name: 'status', type: 'choice', choices: [1, 6], column: 'status' },
    { name: 'user.id', aliases: ['user_id'], type: 'uuid', symbol: 'user' },
    { name: 'shift.id', aliases: ['shift_id'], type: 'uuid', symbol: 'shift' },
    { name: 'opportunity.id', aliases: ['opportunity_id'], type: 'uuid', symbol: 'opportunity' },
    { name: 'category.id', aliases: ['category_id'], type: 'uuid', through: { symbol: 'opportunity', table: () => opportunities, param: 'category.id' } },
    { name: 'created_at', type: 'timestamp', range: true, column: 'created' },
    { name: 'shift_start_at', type: 'timestamp', range: true, column: 'start' },
    { name: 'shift_date', type: 'date', range: true, column: 'start' },
    { name: 'logged_hours', type: 'number', range: true, column: 'hours' },
    updatedAtParam,
  ],
  json: reservationJson,
  nests: ['shift', 'profile', 'opportunity', 'category'],
};
