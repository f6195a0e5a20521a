/**
 * Synthetic data for the benchmark, with the skew real volunteer data has:
 * N shifts across several institutions (the first holding half), each
 * institution with its own categories and opportunities (the largest: 14
 * categories, ~200 opportunities), shifts spread over opportunities and
 * titles by a Zipf law, spots and start times bunched as schedules are
 * (mornings, a few spots), and repeat volunteers: a small pool of profiles
 * (2,500 for a million shifts) holding ~0.46 reservations per shift,
 * the most active volunteers thousands each, half of them with hours
 * logged, one in ten cancelled. Form submissions, sequences, user
 * sequences, tags and sites besides, so that every search endpoint has
 * data. Each institution has a known API key. As NDJSON lines of the event
 * catalog; deterministic for a given seed.
 *
 * `pools` holds, per institution, the values a random query draws its
 * filters from (ids, titles, names, dates the data holds).
 */
import { createHash } from 'node:crypto';
import { mulberry32, seededUuid } from '../scripts/random.js';

/** What a random query of one institution can filter on: values its data holds. */
export interface InstitutionPools {
  readonly categories: ReadonlyArray<{ id: string; title: string }>;
  readonly opportunities: ReadonlyArray<{ id: string; title: string; description: string }>;
  readonly shiftTitles: readonly string[];
  readonly shiftDescriptions: readonly string[];
  /** A sample of shift, reservation, profile, submission, sequence, user-sequence and site ids. */
  readonly ids: Readonly<Record<'shift' | 'reservation' | 'profile' | 'submission' | 'sequence' | 'usersequence' | 'site', readonly string[]>>;
  readonly profiles: ReadonlyArray<{ first: string; last: string; email: string; phone: string }>;
  readonly tags: readonly string[];
  readonly forms: ReadonlyArray<{ id: string; title: string }>;
  readonly folders: readonly string[];
  readonly questions: readonly string[];
  readonly answers: readonly string[];
  readonly sequences: ReadonlyArray<{ title: string; description: string; status: string; display_status: string }>;
  readonly siteTitles: readonly string[];
  /** The first and last day (ms, midnight UTC) shifts start on. */
  readonly startDays: readonly [number, number];
  /** The first and last created_at (ms) of the institution's records. */
  readonly created: readonly [number, number];
}

export interface BenchData {
  lines: string[];
  keys: string[];
  institutionIds: string[];
  /** For each institution: a sample of its opportunity, category, shift and profile ids. */
  samples: Array<{ opportunity: string; category: string; shift: string; profile: string }>;
  /** For each institution: how many shifts it holds. */
  counts: number[];
  /** For each institution: how many reservations (not cancelled) and profiles it holds. */
  reservations: number[];
  profiles: number[];
  /** For each institution: reservations with hours logged. */
  withHours: number[];
  pools: InstitutionPools[];
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const FIRST = ['Ada', 'Ben', 'Chloe', 'Dev', 'Ema', 'Femi', 'Gus', 'Hana', 'Ivo', 'June', 'Kofi', 'Lena', 'Mateo', 'Nora', 'Omar', 'Pia'];
const LAST = ['Okafor', 'Lindqvist', 'Nakamura', 'Silva', 'Haddad', 'Novak', 'Reyes', 'Brennan', 'Chen', 'Dubois', 'Gupta', 'Moreau'];
const SHIFT_TITLES = [
  'Morning sort', 'Evening pack', 'Delivery run', 'Front desk', 'Night inventory', 'Pantry shift', 'Dog walk', 'Class helper',
  'Kitchen prep', 'Warehouse intake', 'Driver', 'Greeter', 'Phone bank', 'Garden crew', 'Cleanup', 'Tutor', 'Mentor session',
  'Event setup', 'Event teardown', 'Registration desk', 'Food rescue pickup', 'Senior visit', 'Reading buddy', 'Cat care',
  'Laundry', 'Donation sorting', 'Shelf stocking', 'Mobile pantry', 'Hotline', 'Data entry',
];
const DESCRIPTIONS = [
  'Bring water and closed-toe shoes.',
  'Training provided on site.',
  'Meet at the front entrance.',
  'Heavy lifting involved.',
  'Suitable for families with children over 12.',
];
const CATEGORY_TITLES = [
  'Food Distribution', 'Warehouse', 'Animal Care', 'Education', 'Events', 'Outreach', 'Administration', 'Transport',
  'Health', 'Environment', 'Seniors', 'Youth', 'Housing', 'Fundraising',
];
const TAGS = ['Youth', 'Lead', 'Driver', 'Bilingual', 'First aid', 'Weekend'];
const FORMS = ['Volunteer application', 'Waiver', 'Background check', 'Event sign-up', 'Feedback', 'Orientation quiz'];
const FOLDERS = ['Onboarding', 'Events', 'Compliance'];
const QUESTIONS = ['q-why', 'q-shirt', 'q-days', 'q-skills', 'q-allergies', 'q-transport', 'q-hours', 'q-referral', 'q-languages', 'q-experience', 'q-emergency', 'q-photo'];
const ANSWERS = ['Yes', 'No', 'M', 'L', 'Weekends', 'Mornings', 'Car', 'Bus', 'A friend', 'Spanish', '2 years', ''];
const SEQUENCE_STATUSES = ['Published', 'Draft'];
const DISPLAY_STATUSES = ['Public', 'Private'];

/** Draws 0..n-1 with P(k) ∝ 1/(k+1)^s. */
function zipf(rand: () => number, n: number, s: number): () => number {
  const cumulative = new Float64Array(n);
  let total = 0;
  for (let k = 0; k < n; k++) cumulative[k] = total += 1 / (k + 1) ** s;
  return () => {
    const x = rand() * total;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cumulative[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

export function generate(shifts: number, institutions: number, seed = 42): BenchData {
  const rand = mulberry32(seed);
  const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
  let counter = 0;
  const uuid = () => {
    counter += 1;
    const h = (counter * 2654435761 + seed).toString(16).padStart(12, '0').slice(-12);
    const r = Math.floor(rand() * 0xffffffff).toString(16).padStart(8, '0');
    return `${r}-${h.slice(0, 4)}-4${h.slice(4, 7)}-8${h.slice(7, 10)}-${counter.toString(16).padStart(12, '0')}`;
  };
  const iso = (ms: number, micros = 0) => {
    const base = new Date(ms).toISOString().slice(0, 19);
    const frac = (ms % 1000) * 1000 + micros;
    return frac === 0 ? `${base}Z` : `${base}.${String(frac).padStart(6, '0')}Z`;
  };
  const out: BenchData = {
    lines: [],
    keys: [],
    institutionIds: [],
    samples: [],
    counts: [],
    reservations: [],
    profiles: [],
    withHours: [],
    pools: [],
  };
  const emit = (type: string, data: object) => out.lines.push(JSON.stringify({ type, id: uuid(), data }));
  const t0 = Date.UTC(2026, 0, 1);
  const firstDay = Date.UTC(2026, 0, 15);
  const days = 400;
  // Profiles: 2,500 for a million shifts, at least 20 an institution.
  const profilesPerShift = 2_500 / 1_000_000;

  for (let i = 0; i < institutions; i++) {
    const institution_id = uuid();
    out.institutionIds.push(institution_id);
    const base = { institution_id };
    const key = `bench-key-${i}`;
    out.keys.push(key);
    let clock = t0 + i * HOUR;
    const createdFrom = clock + 1000;
    const at = (step = 1000) => iso((clock += step), step < 1000 ? int(0, 999) : 0);
    emit('InstitutionRegistered', { ...base, occurred_at: at(), name: `Org ${i}`, share_base_url: `https://org${i}.example` });
    emit('ApiKeyIssued', { ...base, occurred_at: at(), key_id: uuid(), key_sha256: createHash('sha256').update(key).digest('hex') });

    // The first institution holds half of the shifts, the others share the rest.
    const count = institutions === 1 ? shifts : i === 0 ? Math.ceil(shifts / 2) : Math.floor(shifts / 2 / (institutions - 1));
    const large = i === 0 || institutions === 1;

    const categories = CATEGORY_TITLES.slice(0, large ? 14 : 4 + (i % 7)).map((title) => {
      const category_id = uuid();
      emit('CategoryCreated', { ...base, occurred_at: at(), category_id, title, description: `${title} roles` });
      return { id: category_id, title };
    });
    const categoryOf = zipf(rand, categories.length, 0.8);
    const opportunities = Array.from({ length: large ? 200 : 12 + 4 * (i % 8) }, (_, o) => {
      const opportunity_id = uuid();
      const category = categories[categoryOf()]!;
      const title = `${category.title} role ${o}`;
      const description = o % 3 === 0 ? 'Ongoing role' : `Help with ${category.title.toLowerCase()}`;
      emit('OpportunityCreated', { ...base, occurred_at: at(), opportunity_id, category_id: category.id, title, description, status: o % 7 === 0 ? 0 : o % 5 === 0 ? 2 : 1 });
      return { id: opportunity_id, title, description, category: category.id };
    });
    // A few opportunities move to another category (their shifts follow).
    for (let m = 0; m < Math.ceil(opportunities.length / 40); m++) {
      const opportunity = opportunities[int(0, opportunities.length - 1)]!;
      const category = categories[categoryOf()]!;
      opportunity.category = category.id;
      emit('OpportunityUpdated', { ...base, occurred_at: at(), opportunity_id: opportunity.id, category_id: category.id });
    }

    const nProfiles = Math.max(20, Math.round(count * profilesPerShift));
    const profiles = Array.from({ length: nProfiles }, (_, p) => {
      const profile_id = uuid();
      const first = FIRST[p % FIRST.length]!;
      const last = LAST[Math.floor(p / FIRST.length) % LAST.length]!;
      const email = `${first}.${last}.${p}@example.org`.toLowerCase();
      const phone = p % 4 === 0 ? '' : `+1-555-${String(1000 + (p % 9000)).padStart(4, '0')}`;
      emit('ProfileCreated', {
        ...base,
        occurred_at: at(),
        profile_id,
        is_offline: p % 7 === 6,
        first_name: first,
        last_name: last,
        email,
        phone_number: phone,
        timezone: 'America/New_York',
      });
      if (p % 3 === 0) {
        const tag = TAGS[p % TAGS.length]!;
        emit('ProfileTagged', { ...base, occurred_at: at(), profile_id, profile_tag_id: uuid(), tag: { id: uuid(), tag_title: tag } });
      }
      return { id: profile_id, first, last, email, phone };
    });
    out.profiles.push(profiles.length);
    // Repeat volunteers: a few profiles hold most reservations.
    const volunteer = zipf(rand, profiles.length, 1.0);

    const opportunityOf = zipf(rand, opportunities.length, 1.0);
    const titleOf = zipf(rand, SHIFT_TITLES.length, 0.9);
    const spotsOf = zipf(rand, 20, 1.2);
    const durationOf = zipf(rand, 8, 1.0);
    // Half-hour slots from 06:00, mornings first.
    const slotOf = zipf(rand, 32, 0.6);
    const shiftIds: string[] = [];
    let reservations = 0;
    /** Every 200th reservation kept (not cancelled): ids the random mix asks for. */
    const reservationIds: string[] = [];
    let withHours = 0;
    let firstShift = '';
    const sampleEvery = Math.max(1, Math.floor(count / 500));
    for (let s = 0; s < count; s++) {
      const opportunity = opportunities[opportunityOf()]!;
      const day = firstDay + int(0, days - 1) * DAY;
      let start = day + 6 * HOUR + slotOf() * 30 * MINUTE;
      if (s % 10 === 0) start += 15 * MINUTE; // some at quarter past
      const shift_id = uuid();
      firstShift ||= shift_id;
      if (s % sampleEvery === 0) shiftIds.push(shift_id);
      const spots = 1 + spotsOf();
      const description = rand() < 0.15 ? null : DESCRIPTIONS[Math.floor(rand() * rand() * DESCRIPTIONS.length)]!;
      emit('ShiftCreated', {
        ...base,
        occurred_at: at(17),
        shift_id,
        opportunity_id: opportunity.id,
        title: SHIFT_TITLES[titleOf()]!,
        description,
        shift_start_at: iso(start),
        shift_end_at: iso(start + (1 + durationOf()) * HOUR),
        spots,
        location: 'Main site',
      });
      if (s % 50 === 7) emit('ShiftUpdated', { ...base, occurred_at: at(3), shift_id, spots: spots + 2, title: SHIFT_TITLES[titleOf()]! });
      if (s % 400 === 13) {
        emit('ShiftRemoved', { ...base, occurred_at: at(3), shift_id });
        if (shiftIds[shiftIds.length - 1] === shift_id) shiftIds.pop(); // the sample holds shifts that exist
        continue;
      }
      // ~0.46 reservations a shift, never more than its spots.
      const wanted = Math.min(spots, rand() < 0.37 ? 1 + Math.floor(rand() * rand() * 3) : 0);
      for (let k = 0; k < wanted; k++) {
        const reservation_id = uuid();
        emit('ReservationCreated', { ...base, occurred_at: at(3), reservation_id, shift_id, user_id: profiles[volunteer()]!.id });
        const roll = rand();
        if (roll < 0.1) emit('ReservationCancelled', { ...base, occurred_at: at(3), reservation_id });
        else {
          reservations++;
          if (reservations % 200 === 1) reservationIds.push(reservation_id);
          if (roll < 0.6) {
            withHours++;
            const hours = 1 + (s % 6);
            emit('HoursLogged', {
              ...base,
              occurred_at: iso(start + (hours + 1) * HOUR),
              reservation_id,
              logged_hours: hours,
              arrival_time: iso(start),
              departure_time: iso(start + hours * HOUR),
            });
          }
        }
      }
    }
    out.counts.push(count);
    out.reservations.push(reservations);
    out.withHours.push(withHours);

    const sites = Array.from({ length: large ? 30 : 8 }, (_, k) => {
      const site_id = uuid();
      const title = `Site ${k} ${['North', 'South', 'East', 'West'][k % 4]}`;
      emit('SiteCreated', { ...base, occurred_at: at(), site_id, title, ...(k % 3 === 0 ? {} : { address: `${100 + k} Market St` }) });
      return { id: site_id, title };
    });
    for (let p = 0; p < profiles.length; p += 2) {
      emit('UserAssignedToSite', { ...base, occurred_at: at(), site_id: sites[p % sites.length]!.id, user_id: profiles[p]!.id });
    }

    const forms = FORMS.map((title) => ({ id: `form-${i}-${title.split(' ')[0]!.toLowerCase()}`, title }));
    const submissions: string[] = [];
    const nSubmissions = large ? 6_000 : 600;
    for (let k = 0; k < nSubmissions; k++) {
      const submission_id = uuid();
      if (k % 12 === 0) submissions.push(submission_id);
      const questions = Array.from({ length: 2 + (k % 4) }, (_, q) => {
        const id = QUESTIONS[(k + q * 5) % QUESTIONS.length]!;
        return { id: uuid(), question: { id, title: `Question ${id}`, question_type: 1, options: [] }, answer: ANSWERS[(k * 7 + q) % ANSWERS.length]! };
      });
      emit('FormSubmitted', {
        ...base,
        occurred_at: at(),
        submission_id,
        user_id: profiles[volunteer()]!.id,
        form: forms[k % forms.length]!,
        folder: { name: FOLDERS[k % FOLDERS.length]! },
        submission_status: k % 9 === 0 ? 'Reviewed' : 'New',
        site_ids: [sites[k % sites.length]!.id],
        category_ids: [categories[k % categories.length]!.id],
        questions,
      });
    }

    const sequences = Array.from({ length: large ? 20 : 6 }, (_, k) => {
      const sequence_id = uuid();
      const sequence = {
        title: `Onboarding track ${k}`,
        description: k % 2 === 0 ? '<p>Steps to start volunteering</p>' : '<p>Certification</p>',
        status: SEQUENCE_STATUSES[k % 4 === 3 ? 1 : 0]!,
        display_status: DISPLAY_STATUSES[k % 3 === 2 ? 1 : 0]!,
      };
      emit('SequenceCreated', { ...base, occurred_at: at(), sequence_id, ...sequence, folder: { id: uuid(), name: FOLDERS[k % FOLDERS.length]! } });
      for (let step = 1; step <= 2 + (k % 4); step++) {
        emit('SequenceStepAdded', {
          ...base,
          occurred_at: at(),
          sequence_id,
          step_id: uuid(),
          step,
          type: 1 + (step % 3),
          type_display: ['Interview', 'Training', 'Form'][step % 3]!,
          step_details: [{ id: uuid(), title: `Step ${step}`, description: 'Complete this step' }],
        });
      }
      return { id: sequence_id, ...sequence };
    });
    const userSequences: string[] = [];
    for (let p = 0; p < profiles.length; p++) {
      const user_sequence_id = uuid();
      userSequences.push(user_sequence_id);
      emit('UserSequenceStarted', { ...base, occurred_at: at(), user_sequence_id, sequence_id: sequences[p % sequences.length]!.id, user_id: profiles[p]!.id });
      if (p % 4 === 1) emit('UserSequenceStatusChanged', { ...base, occurred_at: at(), user_sequence_id, status: ['Paused', 'Inactive', 'Finished'][p % 3]! });
    }

    const sample = <T>(xs: readonly T[], n: number) => xs.filter((_, k) => k % Math.max(1, Math.floor(xs.length / n)) === 0);
    out.samples.push({ opportunity: opportunities[1]!.id, category: opportunities[1]!.category, shift: firstShift, profile: profiles[0]!.id });
    out.pools.push({
      categories,
      opportunities: opportunities.map(({ id, title, description }) => ({ id, title, description })),
      shiftTitles: SHIFT_TITLES,
      shiftDescriptions: DESCRIPTIONS,
      ids: {
        shift: shiftIds,
        reservation: reservationIds,
        profile: sample(profiles.map((p) => p.id), 200),
        submission: submissions,
        sequence: sequences.map((s) => s.id),
        usersequence: sample(userSequences, 200),
        site: sites.map((s) => s.id),
      },
      profiles: sample(profiles, 200),
      tags: TAGS,
      forms,
      folders: FOLDERS,
      questions: QUESTIONS,
      answers: ANSWERS.filter((a) => a !== ''),
      sequences,
      siteTitles: sites.map((s) => s.title),
      startDays: [firstDay, firstDay + (days - 1) * DAY],
      created: [createdFrom, clock],
    });
  }
  return out;
}

/**
 * `n` events for the largest institution, as another writer would append
 * them while the service is serving: new shifts of any of its
 * opportunities, changes to them, and reservations on them by its
 * volunteers (each of which changes its shift again).
 */
export function liveEvents(data: BenchData, n: number, seed = 99): Array<{ id: string; type: string; data: unknown }> {
  const rand = mulberry32(seed);
  const institution_id = data.institutionIds[0]!;
  // Any of the institution's opportunities and (a sample of) its volunteers, as a real feed would spread them.
  const { opportunities, ids } = data.pools[0]!;
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
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
        opportunity_id: pick(opportunities).id,
        title: 'Live shift',
        description: null,
        shift_start_at: new Date(start).toISOString(),
        shift_end_at: new Date(start + 3 * HOUR).toISOString(),
        spots: 1 + Math.floor(rand() * 20),
      });
    } else if (k % 3 === 1) {
      emit('ShiftUpdated', { shift_id: shift, spots: 1 + Math.floor(rand() * 20), shift_start_at: new Date(start).toISOString(), shift_end_at: new Date(start + 2 * HOUR).toISOString() });
    } else {
      emit('ReservationCreated', { reservation_id: seededUuid(rand, 'a'), shift_id: shift, user_id: pick(ids.profile) });
    }
  }
  return lines;
}

/**
 * `n` events for the largest institution that change records it already has and add none: shifts moved to
 * another day and hour, retitled, given other spots (each moves the shift in several sorted indexes, a text
 * dictionary and its reservations' columns). What a soak imports: the read model stays the same size, so memory
 * that grows over the run is a leak, not more data.
 */
export function steadyEvents(data: BenchData, n: number, seed: number): Array<{ id: string; type: string; data: unknown }> {
  const rand = mulberry32(seed);
  const institution_id = data.institutionIds[0]!;
  const { ids, shiftTitles, startDays } = data.pools[0]!;
  const days = Math.round((startDays[1] - startDays[0]) / DAY) + 1;
  return Array.from({ length: n }, () => {
    const start = startDays[0] + Math.floor(rand() * days) * DAY + Math.floor(rand() * 48) * (HOUR / 2);
    return {
      type: 'ShiftUpdated',
      id: seededUuid(rand, 'a'),
      data: {
        institution_id,
        occurred_at: new Date().toISOString(),
        shift_id: ids.shift[Math.floor(rand() * ids.shift.length)]!,
        title: shiftTitles[Math.floor(rand() * shiftTitles.length)]!,
        shift_start_at: new Date(start).toISOString(),
        shift_end_at: new Date(start + (1 + Math.floor(rand() * 4)) * HOUR).toISOString(),
        spots: 1 + Math.floor(rand() * 20),
      },
    };
  });
}
