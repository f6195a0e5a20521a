/**
 * Reservations: created (status 1), hours logged (status 6), cancelled
 * (gone). Each holds its shift's opportunity and start (searches filter
 * and sort on them): a shift's start moving moves its reservations' (their
 * updated_at stays: only a nested record changed).
 */
import { parseEventTimestamp } from '../src/time.js';
import { type Change, put, remove, type Projection } from './projection.js';

const micros = (s: string | null | undefined): number | null =>
  s === null || s === undefined ? null : (parseEventTimestamp(s) ?? null);

export const reservations: Projection = {
  name: 'reservations',
  ReservationCreated: (view, d, at) => {
    const shift = view.get('shift', d.shift_id);
    return [
      put('reservation', {
        id: d.reservation_id,
        institution_id: d.institution_id,
        shift_id: d.shift_id,
        // A reservation of a shift the log never created (only another writer of the log could append one) sorts first.
        opportunity_id: shift?.opportunity_id ?? '',
        shift_start_at: shift?.shift_start_at ?? 0,
        user_id: d.user_id,
        status: 1,
        logged_hours: 0,
        arrival_time: null,
        departure_time: null,
        hours_approved_by: null,
        created_at: at,
        updated_at: at,
      }),
    ];
  },
  HoursLogged: (view, d, at) => {
    const reservation = view.get('reservation', d.reservation_id);
    if (!reservation) return [];
    return [
      put('reservation', {
        ...reservation,
        status: 6,
        logged_hours: d.logged_hours,
        arrival_time: d.arrival_time === undefined ? reservation.arrival_time : micros(d.arrival_time),
        departure_time: d.departure_time === undefined ? reservation.departure_time : micros(d.departure_time),
        hours_approved_by: d.approved_by === undefined ? reservation.hours_approved_by : d.approved_by,
        updated_at: at,
      }),
    ];
  },
  ShiftUpdated: (view, d) => {
    if (d.shift_start_at === undefined || !view.get('shift', d.shift_id)) return [];
    const start = micros(d.shift_start_at)!;
    const changes: Change[] = [];
    for (const id of view.reservationsOf(d.shift_id)) {
      const reservation = view.get('reservation', id);
      if (reservation && reservation.shift_start_at !== start) changes.push(put('reservation', { ...reservation, shift_start_at: start }));
    }
    return changes;
  },
  ReservationCancelled: (view, d) =>
    view.get('reservation', d.reservation_id) ? [remove('reservation', d.reservation_id)] : [],
};
