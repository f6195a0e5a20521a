/** Reservations: created (status 1), hours logged (status 6), cancelled (gone). */
import { parseEventTimestamp } from '../src/time.js';
import { put, remove, type Projection } from './projection.js';

const micros = (s: string | null | undefined): number | null =>
  s === null || s === undefined ? null : (parseEventTimestamp(s) ?? null);

export const reservations: Projection = {
  name: 'reservations',
  ReservationCreated: (_view, d, at) => [
    put('reservation', {
      id: d.reservation_id,
      institution_id: d.institution_id,
      shift_id: d.shift_id,
      user_id: d.user_id,
      status: 1,
      logged_hours: 0,
      arrival_time: null,
      departure_time: null,
      hours_approved_by: null,
      created_at: at,
      updated_at: at,
    }),
  ],
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
  ReservationCancelled: (view, d) =>
    view.get('reservation', d.reservation_id) ? [remove('reservation', d.reservation_id)] : [],
};
