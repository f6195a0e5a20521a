/**
 * Shifts, with spots_reserved kept current from the reservations: a
 * reservation holds a spot from ReservationCreated until it is cancelled
 * (logging hours keeps it).
 */
import { parseEventTimestamp } from '../src/time.js';
import { put, type Change, type Projection, type ReadView } from './projection.js';

const micros = (s: string): number => parseEventTimestamp(s) ?? 0;

function adjustReserved(view: ReadView, shiftId: string, delta: number, at: number): Change[] {
  const shift = view.get('shift', shiftId);
  if (!shift) return [];
  return [put('shift', { ...shift, spots_reserved: Math.max(shift.spots_reserved + delta, 0), updated_at: at })];
}

export const shifts: Projection = {
  name: 'shifts',
  ShiftCreated: (_view, d, at) => [
    put('shift', {
      id: d.shift_id,
      institution_id: d.institution_id,
      opportunity_id: d.opportunity_id,
      title: d.title,
      description: d.description,
      shift_start_at: micros(d.shift_start_at),
      shift_end_at: micros(d.shift_end_at),
      spots: d.spots,
      location: d.location ?? '',
      spots_reserved: 0,
      removed: false,
      created_at: at,
      updated_at: at,
    }),
  ],
  ShiftUpdated: (view, d, at) => {
    const shift = view.get('shift', d.shift_id);
    if (!shift) return [];
    return [
      put('shift', {
        ...shift,
        title: d.title ?? shift.title,
        description: d.description === undefined ? shift.description : d.description,
        shift_start_at: d.shift_start_at === undefined ? shift.shift_start_at : micros(d.shift_start_at),
        shift_end_at: d.shift_end_at === undefined ? shift.shift_end_at : micros(d.shift_end_at),
        spots: d.spots ?? shift.spots,
        location: d.location === undefined ? shift.location : (d.location ?? ''),
        updated_at: at,
      }),
    ];
  },
  ShiftRemoved: (view, d, at) => {
    const shift = view.get('shift', d.shift_id);
    return shift ? [put('shift', { ...shift, removed: true, updated_at: at })] : [];
  },
  ReservationCreated: (view, d, at) => adjustReserved(view, d.shift_id, +1, at),
  ReservationCancelled: (view, d, at) => {
    const reservation = view.get('reservation', d.reservation_id);
    return reservation ? adjustReserved(view, reservation.shift_id, -1, at) : [];
  },
};
