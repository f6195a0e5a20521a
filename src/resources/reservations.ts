/** Reservations: list and retrieve, with the reduced shift, the user summary and the opportunity. */
import type { ReadView } from '../../projections/projection.js';
import type { OpportunityRecord, ReservationRecord, ShiftRecord } from '../../projections/records.js';
import { byCreatedAt, syncOrderings, updatedAtParam } from './created-order.js';
import type { ResourceDef } from '../query/resource.js';
import { categoryJson } from './opportunities.js';
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
  // The list takes updated_at (what changed since) and its orderings; no other filter.
  endpoints: { search: false, retrieve: true, filteredList: true },
  ...byCreatedAt,
  orderings: syncOrderings,
  params: [updatedAtParam],
  json: reservationJson,
  nests: ['shift', 'profile', 'opportunity', 'category'],
};
