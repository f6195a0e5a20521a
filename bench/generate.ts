/**
 * Synthetic data for the benchmark: N shifts across several institutions
 * (the first holding half), each with a known API key, a profile per 20
 * shifts and a reservation for every third shift (one in ten of those
 * cancelled, one in four with hours logged), as NDJSON lines of the event
 * catalog. Deterministic for a given seed.
 */
import { createHash } from 'node:crypto';
import { mulberry32, seededUuid } from '../scripts/random.js';

export interface BenchData {
  lines: string[];
  keys: string[];
  institutionIds: string[];
  /** For each institution: a sample of its opportunity, category, shift and profile ids. */
  samples: Array<{ opportunity: string; category: string; shift: string; profile: string }>;
  /** For each institution: how many shifts it holds. */
  counts: number[];
  /** For each institution: how many reservations and profiles it holds. */
  reservations: number[];
  profiles: number[];
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const FIRST = ['Ada', 'Ben', 'Chloe', 'Dev', 'Ema', 'Femi', 'Gus', 'Hana', 'Ivo', 'June'];
const LAST = ['Okafor', 'Lindqvist', 'Nakamura', 'Silva', 'Haddad', 'Novak', 'Reyes', 'Brennan'];
const TITLES = ['Morning sort', 'Evening pack', 'Delivery run', 'Front desk', 'Night inventory', 'Pantry shift', 'Dog walk', 'Class helper'];

export function generate(shifts: number, institutions: number, seed = 42): BenchData {
  const rand = mulberry32(seed);
  let counter = 0;
  const uuid = () => {
    counter += 1;
    const h = (counter * 2654435761 + seed).toString(16).padStart(12, '0').slice(-12);
    const r = Math.floor(rand() * 0xffffffff).toString(16).padStart(8, '0');
    return `${r}-${h.slice(0, 4)}-4${h.slice(4, 7)}-8${h.slice(7, 10)}-${counter.toString(16).padStart(12, '0')}`;
  };
  const iso = (ms: number, micros = 0) => {
    const base = new Date(ms).toISOString().slice(0, 19);
    return micros === 0 ? `${base}Z` : `${base}.${String(micros).padStart(6, '0')}Z`;
  };
  const lines: string[] = [];
  const keys: string[] = [];
  const institutionIds: string[] = [];
  const samples: BenchData['samples'] = [];
  const counts: number[] = [];
  const reservationCounts: number[] = [];
  const profileCounts: number[] = [];
  const emit = (type: string, data: object) => lines.push(JSON.stringify({ type, id: uuid(), data }));
  const t0 = Date.UTC(2026, 0, 1);

  for (let i = 0; i < institutions; i++) {
    const institution_id = uuid();
    institutionIds.push(institution_id);
    const base = { institution_id };
    const key = `bench-key-${i}`;
    keys.push(key);
    let clock = t0;
    const at = () => iso((clock += 1000));
    emit('InstitutionRegistered', { ...base, occurred_at: at(), name: `Org ${i}`, share_base_url: `https://org${i}.example` });
    emit('ApiKeyIssued', {
      ...base,
      occurred_at: at(),
      key_id: uuid(),
      key_sha256: createHash('sha256').update(key).digest('hex'),
    });
    const categories = Array.from({ length: 5 }, (_, c) => {
      const category_id = uuid();
      emit('CategoryCreated', { ...base, occurred_at: at(), category_id, title: `Category ${c}`, description: 'Bench category' });
      return category_id;
    });
    const opportunities = Array.from({ length: 20 }, (_, o) => {
      const opportunity_id = uuid();
      emit('OpportunityCreated', {
        ...base,
        occurred_at: at(),
        opportunity_id,
        category_id: categories[o % 5]!,
        title: `Opportunity ${o}`,
        description: 'Bench opportunity',
        status: (o % 3) as 0 | 1 | 2,
      });
      return { opportunity: opportunity_id, category: categories[o % 5]! };
    });
    // The first institution holds half of the shifts, the others share the rest.
    const count = institutions === 1 ? shifts : i === 0 ? Math.ceil(shifts / 2) : Math.floor(shifts / 2 / (institutions - 1));
    counts.push(count);
    const profiles = Array.from({ length: Math.max(1, Math.ceil(count / 20)) }, (_, p) => {
      const profile_id = uuid();
      const first = FIRST[p % FIRST.length]!;
      const last = LAST[Math.floor(p / FIRST.length) % LAST.length]!;
      emit('ProfileCreated', {
        ...base,
        occurred_at: at(),
        profile_id,
        is_offline: p % 7 === 6,
        first_name: first,
        last_name: last,
        email: `${first}.${last}.${p}@example.org`.toLowerCase(),
        timezone: 'America/New_York',
      });
      return profile_id;
    });
    profileCounts.push(profiles.length);
    let reservations = 0;
    let firstShift = '';
    for (let s = 0; s < count; s++) {
      const opportunity = opportunities[Math.floor(rand() * opportunities.length)]!;
      const start = t0 + 30 * DAY + Math.floor(rand() * 365) * DAY + Math.floor(rand() * 48) * (HOUR / 2);
      const shift_id = uuid();
      firstShift ||= shift_id;
      emit('ShiftCreated', {
        ...base,
        occurred_at: iso((clock += 17), s % 4 === 0 ? Math.floor(rand() * 999_999) + 1 : 0),
        shift_id,
        opportunity_id: opportunity.opportunity,
        title: TITLES[s % TITLES.length]!,
        description: s % 5 === 0 ? null : 'Bring water and closed-toe shoes.',
        shift_start_at: iso(start),
        shift_end_at: iso(start + (2 + (s % 5)) * HOUR),
        spots: 1 + Math.floor(rand() * 20),
        location: 'Main site',
      });
      if (s % 3 !== 0) continue;
      const reservation_id = uuid();
      reservations++;
      emit('ReservationCreated', {
        ...base,
        occurred_at: iso((clock += 3)),
        reservation_id,
        shift_id,
        user_id: profiles[Math.floor(rand() * profiles.length)]!,
      });
      if (s % 30 === 0) emit('ReservationCancelled', { ...base, occurred_at: iso((clock += 3)), reservation_id });
      else if (s % 12 === 3) {
        emit('HoursLogged', {
          ...base,
          occurred_at: iso(start + 5 * HOUR),
          reservation_id,
          logged_hours: 2 + (s % 4),
          arrival_time: iso(start),
          departure_time: iso(start + (2 + (s % 4)) * HOUR),
        });
      }
    }
    reservationCounts.push(reservations);
    samples.push({ ...opportunities[1]!, shift: firstShift, profile: profiles[0]! });
  }
  return { lines, keys, institutionIds, samples, counts, reservations: reservationCounts, profiles: profileCounts };
}

/**
 * `n` events for the largest institution, as another writer would append
 * them while the service is serving: new shifts, changes to them, and
 * reservations on them (each of which changes its shift again).
 */
export function liveEvents(data: BenchData, n: number, seed = 99): Array<{ id: string; type: string; data: unknown }> {
  const rand = mulberry32(seed);
  const institution_id = data.institutionIds[0]!;
  const { opportunity, profile } = data.samples[0]!;
  const lines: Array<{ id: string; type: string; data: unknown }> = [];
  const emit = (type: string, fields: object) =>
    lines.push({ type, id: seededUuid(rand, 'a'), data: { institution_id, occurred_at: new Date().toISOString(), ...fields } });
  let shift = '';
  for (let k = 0; k < n; k++) {
    const start = Date.UTC(2026, 1, 1) + Math.floor(rand() * 330) * DAY + Math.floor(rand() * 48) * (HOUR / 2);
    if (k % 3 === 0) {
      shift = seededUuid(rand, 'a');
      emit('ShiftCreated', {
        shift_id: shift,
        opportunity_id: opportunity,
        title: 'Live shift',
        description: null,
        shift_start_at: new Date(start).toISOString(),
        shift_end_at: new Date(start + 3 * HOUR).toISOString(),
        spots: 1 + Math.floor(rand() * 20),
      });
    } else if (k % 3 === 1) {
      emit('ShiftUpdated', { shift_id: shift, spots: 1 + Math.floor(rand() * 20), shift_start_at: new Date(start).toISOString(), shift_end_at: new Date(start + 2 * HOUR).toISOString() });
    } else {
      emit('ReservationCreated', { reservation_id: seededUuid(rand, 'a'), shift_id: shift, user_id: profile });
    }
  }
  return lines;
}
