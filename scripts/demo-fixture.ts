/**
 * Generates fixtures/demo.ndjson: two believable organizations, made
 * deterministically (a seeded generator), so the file and the snapshots
 * built on it only change when this script does.
 *
 *   npm run fixture:demo
 */
import { createHash } from 'node:crypto';
import { mulberry32, seededUuid } from './random.js';

const rand = mulberry32(20260901);
const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
const hex = (n: number) => Array.from({ length: n }, () => Math.floor(rand() * 16).toString(16)).join('');
const uuid = () => `${hex(8)}-${hex(4)}-4${hex(3)}-${pick(['8', '9', 'a', 'b'])}${hex(3)}-${hex(12)}`;
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
/** ISO timestamp from whole-minute milliseconds, plus microseconds (0 to 999,999). */
const iso = (ms: number, micros = 0) => {
  const base = new Date(ms).toISOString().slice(0, 19);
  const frac = (ms % 1000) * 1000 + micros;
  return frac === 0 ? `${base}Z` : `${base}.${String(frac).padStart(6, '0')}Z`;
};

const lines: string[] = [];
const emitEvent = (type: string, data: Record<string, unknown>, id = uuid()) => {
  lines.push(JSON.stringify({ type, id, data }));
};
const emit = (type: string, data: Record<string, unknown>) => emitEvent(type, data);

export const DEMO_KEYS = {
  riverside: 'vm_demo_riverside_7Qm2x9KfLp4sT8wZ',
  harbor: 'vm_demo_harbor_3Hd8nV2cRq6yJ1bM',
};

interface OrgPlan {
  key: string;
  name: string;
  base: string;
  categories: Array<[string, string]>;
  opportunities: Array<[number, string, string, 0 | 1 | 2]>;
  profiles: number;
  shifts: number;
  start: number;
}

const FIRST = ['Ana', 'Ben', 'Chloe', 'Dev', 'Elena', 'Farid', 'Grace', 'Hiro', 'Ines', 'Jamal', 'Kara', 'Liam', 'Mina', 'Noah', 'Olga', 'Priya', 'Quinn', 'Rosa', 'Sam', 'Tariq', 'Uma', 'Victor', 'Wen', 'Yara', 'Zoe'];
const LAST = ['Alvarez', 'Brooks', 'Chen', 'Dubois', 'Eriksen', 'Fischer', 'Gupta', 'Haddad', 'Ito', 'Jensen', 'Kowalski', 'Lopez', 'Mensah', 'Nakamura', 'Okafor', 'Patel'];
const LOCATIONS = ['Main warehouse, 12 Dock St', 'Eastside pantry', 'Community center hall', 'Mobile unit (north route)', ''];

function organization(plan: OrgPlan) {
  const institution = uuid();
  let clock = plan.start;
  const at = (stepMin = 7, micros = 0) => {
    clock += stepMin * MIN;
    return iso(clock, micros);
  };
  const base = { institution_id: institution };
  emit('InstitutionRegistered', { ...base, occurred_at: at(), name: plan.name, share_base_url: plan.base });
  emit('ApiKeyIssued', { ...base, occurred_at: at(), key_id: uuid(), key_sha256: sha256(plan.key), label: 'demo' });

  const categories = plan.categories.map(([title, description]) => {
    const id = uuid();
    emit('CategoryCreated', { ...base, occurred_at: at(), category_id: id, title, description });
    return id;
  });
  const opportunities = plan.opportunities.map(([c, title, description, status]) => {
    const id = uuid();
    emit('OpportunityCreated', {
      ...base,
      occurred_at: at(11, int(0, 1) ? int(1, 999_999) : 0),
      opportunity_id: id,
      category_id: categories[c]!,
      title,
      description,
      status,
    });
    return { id, status };
  });
  const profiles = Array.from({ length: plan.profiles }, (_, i) => {
    const id = uuid();
    const first = FIRST[i % FIRST.length]!;
    const last = LAST[(i * 7) % LAST.length]!;
    emit('ProfileCreated', {
      ...base,
      occurred_at: at(13),
      profile_id: id,
      is_offline: i % 6 === 5,
      first_name: first,
      last_name: last,
      email: `${first}.${last}${i}@example.org`.toLowerCase(),
      phone_number: `+1-555-01${String(i).padStart(2, '0')}`,
      timezone: 'America/New_York',
    });
    return id;
  });

  // Shifts over two months from the first of the month after setup.
  const season = Date.UTC(new Date(clock).getUTCFullYear(), new Date(clock).getUTCMonth() + 1, 1);
  const bookable = opportunities.filter((o) => o.status !== 0);
  const shifts: string[] = [];
  const startHours = [8, 9, 9, 13, 17, 22, 23];
  let previousStart = 0;
  for (let i = 0; i < plan.shifts; i++) {
    const id = uuid();
    const opportunity = bookable[i % bookable.length]!;
    // Every 9th shift starts with the one before it (a tie on shift_start_at).
    const tie = i % 9 === 8;
    const day = season + Math.floor((i * 61) / plan.shifts) * DAY;
    const start = tie ? previousStart : day + pick(startHours) * HOUR + pick([0, 0, 15, 30]) * MIN;
    previousStart = start;
    const hours = pick([2, 3, 4, 4, 6]);
    const micros = i % 5 === 0 ? int(1, 999_999) : 0;
    const created = tie && i % 2 === 0 ? at(0) : at(3, i % 4 === 0 ? int(1, 999_999) : 0);
    emit('ShiftCreated', {
      ...base,
      occurred_at: created,
      shift_id: id,
      opportunity_id: opportunity.id,
      title: pick(['Morning sort', 'Evening pack', 'Delivery run', 'Front desk', 'Night inventory', 'Pantry shift']),
      description: i % 7 === 3 ? null : pick(['Bring closed-toe shoes.', 'Training provided on site.', 'Lifting up to 20 kg.']),
      shift_start_at: iso(start, micros),
      shift_end_at: iso(start + hours * HOUR, micros),
      spots: pick([1, 2, 4, 5, 8, 10, 12]),
      ...(i % 3 === 0 ? {} : { location: pick(LOCATIONS) }),
    });
    shifts.push(id);
  }

  // Reservations on about half of the shifts; some hours logged, some cancelled.
  const reservations: string[] = [];
  for (let i = 0; i < shifts.length; i += 2) {
    const id = uuid();
    emit('ReservationCreated', {
      ...base,
      occurred_at: at(2, int(0, 1) * int(1, 999_999)),
      reservation_id: id,
      shift_id: shifts[i]!,
      user_id: profiles[int(0, profiles.length - 1)]!,
    });
    reservations.push(id);
  }
  reservations.forEach((id, i) => {
    if (i % 3 === 0) {
      const arrival = clock + 5 * DAY;
      emit('HoursLogged', {
        ...base,
        occurred_at: at(5),
        reservation_id: id,
        logged_hours: pick([1.5, 2, 3, 3.75, 4]),
        ...(i % 2 === 0
          ? {
              arrival_time: iso(arrival),
              departure_time: iso(arrival + 3 * HOUR),
              approved_by: { first_name: 'Dana', last_name: 'Coordinator', email: 'dana@example.org' },
            }
          : {}),
      });
    } else if (i % 7 === 1) {
      emit('ReservationCancelled', { ...base, occurred_at: at(5), reservation_id: id });
    }
  });

  // A few later changes, so the read model shows current records.
  if (categories.length > 1) {
    emit('CategoryUpdated', { ...base, occurred_at: at(), category_id: categories[1]!, description: 'Sorting, packing and stock counts.' });
  }
  const draft = opportunities.find((o) => o.status === 0);
  if (draft) emit('OpportunityStatusChanged', { ...base, occurred_at: at(), opportunity_id: draft.id, status: 1 });
  emit('OpportunityUpdated', { ...base, occurred_at: at(), opportunity_id: opportunities[0]!.id, title: `${plan.opportunities[0]![1]} (weekdays)` });
  emit('ShiftUpdated', { ...base, occurred_at: at(), shift_id: shifts[1]!, spots: 20, location: 'Community center hall' });
  emit('ShiftRemoved', { ...base, occurred_at: at(), shift_id: shifts[3]! });

  profileDetails(base, at, profiles, opportunities.map((o) => o.id));
  formsSequencesSites(base, at, profiles, opportunities.map((o) => o.id), categories);
}

/**
 * Profile details, tags, custom fields and opportunities joined. From an
 * RNG of its own, so that the events before keep their ids.
 */
function profileDetails(
  base: { institution_id: string },
  at: (stepMin?: number) => string,
  profiles: readonly string[],
  opportunities: readonly string[],
) {
  const r = mulberry32(base.institution_id.charCodeAt(0) * 7919 + 17);
  const rid = () => seededUuid(r, '8');
  const choose = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const emit = (type: string, data: Record<string, unknown>) => emitEvent(type, data, rid());

  const boolField = rid();
  emit('CustomFieldDefined', { ...base, occurred_at: at(), custom_field_id: boolField, name: 'Has a driving licence', field_type: 10, is_active: true });
  const multiField = rid();
  const options = ['Weekday mornings', 'Weekday evenings', 'Weekends'].map((value, order) => ({ id: rid(), value, order }));
  emit('CustomFieldDefined', { ...base, occurred_at: at(), custom_field_id: multiField, name: 'Preferred times', field_type: 3, is_active: true, options });
  const tags = ['Youth', 'Bilingual', 'Team lead'].map((tag_title) => ({ id: rid(), tag_title }));

  profiles.forEach((profile, i) => {
    if (i % 3 !== 0) return;
    const year = 1950 + Math.floor(r() * 58);
    emit('ProfileUpdated', {
      ...base,
      occurred_at: at(3),
      profile_id: profile,
      date_of_birth: `${year}-${String(1 + Math.floor(r() * 12)).padStart(2, '0')}-${String(1 + Math.floor(r() * 28)).padStart(2, '0')}`,
      gender: i % 2,
      gender_text: i % 2 === 0 ? 'Female' : 'Male',
      occupation: 2,
      occupation_institution_name: choose(['City Hospital', 'Riverside High School', 'Acme Logistics']),
      address: `${10 + i} Harbor Road`,
      latitude_longitude: [`40.${700 + i}`, `-73.${900 + i}`],
      is_following: i % 2 === 0,
      emergency_contact: { name: 'Sam Rivera', phone_number: '+1-555-0199', relationship: 'Sibling' },
      medical_information: { description: i % 6 === 0 ? 'Nut allergy' : '', has_medical_info: i % 6 === 0 },
      skills: [{ id: rid(), skill_title: choose(['First aid', 'Forklift', 'Spanish', 'Cooking']) }],
      languages: [{ id: rid(), language_name: choose(['English', 'Spanish', 'French']) }],
    });
    const tag = tags[Math.floor(i / 3) % tags.length]!;
    const profileTag = rid();
    emit('ProfileTagged', { ...base, occurred_at: at(1), profile_id: profile, profile_tag_id: profileTag, tag });
    emit('ProfileCustomFieldAnswered', {
      ...base,
      occurred_at: at(1),
      profile_id: profile,
      entry_id: rid(),
      custom_field_id: boolField,
      value: { id: rid(), value: i % 2 === 0 },
    });
    emit('ProfileCustomFieldAnswered', {
      ...base,
      occurred_at: at(1),
      profile_id: profile,
      entry_id: rid(),
      custom_field_id: multiField,
      selections: options.filter((_, k) => (i + k) % 2 === 0).map((o) => ({ id: rid(), option_id: o.id })),
    });
    emit('ProfileOpportunityAdded', { ...base, occurred_at: at(1), profile_id: profile, entry_id: rid(), opportunity_id: choose(opportunities) });
    if (i === 3) emit('ProfileUntagged', { ...base, occurred_at: at(1), profile_id: profile, profile_tag_id: profileTag });
  });
  if (profiles.length > 1) {
    emit('ProfileUpdated', { ...base, occurred_at: at(), profile_id: profiles[1]!, last_name: 'Brooks-Hale', email: 'ben.brookshale@example.org' });
  }
}

organization({
  key: DEMO_KEYS.riverside,
  name: 'Riverside Community Food Bank',
  base: 'https://volunteer.riverside-foodbank.example',
  start: Date.UTC(2026, 7, 3, 9, 0),
  categories: [
    ['Food Distribution', 'Handing out groceries at pantries and mobile units.'],
    ['Warehouse', 'Sorting and packing donations.'],
    ['Community Outreach', 'Events, sign-ups and neighborhood visits.'],
    ['Administration', 'Front desk, phones and data entry.'],
  ],
  opportunities: [
    [0, 'Pantry Helper', 'Greet clients and hand out grocery boxes.', 1],
    [0, 'Mobile Pantry Driver', 'Drive the mobile pantry van (licence required).', 1],
    [1, 'Donation Sorter', 'Check dates and sort donated food.', 1],
    [1, 'Night Inventory', 'Count stock after closing.', 1],
    [1, 'Forklift Operator', 'Certified operators only.', 2],
    [2, 'Outreach Ambassador', 'Represent the food bank at community events.', 1],
    [2, 'Holiday Drive Planner', 'Plan the winter food drive.', 0],
    [3, 'Front Desk Volunteer', 'Answer phones and welcome visitors.', 1],
    [3, 'Data Entry Assistant', 'Enter intake forms.', 2],
    [2, 'School Backpack Program', 'Pack weekend meals for students.', 0],
  ],
  profiles: 24,
  shifts: 150,
});

organization({
  key: DEMO_KEYS.harbor,
  name: 'Harbor Animal Shelter',
  base: 'https://harbor-shelter.example/volunteer/',
  start: Date.UTC(2026, 7, 10, 14, 0),
  categories: [['Animal Care', 'Feeding, walking and socializing animals.']],
  opportunities: [
    [0, 'Dog Walker', 'Walk the shelter dogs twice a day.', 1],
    [0, 'Cat Socializer', 'Spend time with shy cats.', 1],
  ],
  profiles: 6,
  shifts: 12,
});

/**
 * Sites with members, form submissions (every kind of question answer),
 * sequences with steps and user sequences in every status. From an RNG of
 * its own, like profileDetails.
 */
function formsSequencesSites(
  base: { institution_id: string },
  at: (stepMin?: number) => string,
  profiles: readonly string[],
  opportunities: readonly string[],
  categories: readonly string[],
) {
  const r = mulberry32(base.institution_id.charCodeAt(1) * 104729 + 3);
  const rid = () => seededUuid(r, '9');
  const emit = (type: string, data: Record<string, unknown>) => emitEvent(type, data, rid());

  const sites = ['North Pantry', 'Main Warehouse', 'Mobile Unit'].map((title, i) => {
    const site_id = rid();
    emit('SiteCreated', { ...base, occurred_at: at(2), site_id, title, ...(i === 2 ? {} : { address: `${100 + i} Market St` }) });
    return site_id;
  });
  profiles.forEach((user_id, i) => {
    if (i % 2 === 0) emit('UserAssignedToSite', { ...base, occurred_at: at(1), site_id: sites[i % sites.length]!, user_id });
  });
  if (profiles.length > 2) emit('UserUnassignedFromSite', { ...base, occurred_at: at(1), site_id: sites[2 % sites.length]!, user_id: profiles[2]! });

  const form = { id: 'volunteer-intake', title: 'Volunteer Intake Form' };
  profiles.slice(0, Math.min(6, profiles.length)).forEach((user_id, i) => {
    const submission_id = rid();
    emit('FormSubmitted', {
      ...base,
      occurred_at: at(11),
      submission_id,
      user_id,
      form: i === 5 ? { id: 'youth-waiver', title: 'Youth Waiver' } : form,
      folder: { name: i % 2 === 0 ? 'New Volunteers' : 'Returning Volunteers' },
      ...(i === 0 ? {} : { submission_status: 'New' }),
      site_ids: [sites[i % sites.length]!],
      category_ids: categories.slice(0, 1 + (i % 2)),
      arrival_source_opportunity_id: i % 3 === 2 ? null : opportunities[i % opportunities.length]!,
      questions: [
        {
          id: rid(),
          question: { id: 'q-why', title: 'Why do you want to volunteer?', question_type: 1, options: [] },
          answer: ['To give back', 'Meet people', 'School hours', 'To give back', '', 'Love animals'][i]!,
          options: [],
          responded: i !== 4,
        },
        {
          id: rid(),
          question: { id: 'q-shirt', title: 'T-shirt size', question_type: 'dropdown', options: ['S', 'M', 'L'] },
          answer: '',
          options: [['S', 'M', 'L'][i % 3]!],
          date: null,
        },
        {
          id: rid(),
          question: {
            id: 'q-split',
            title: 'How would you split 10 hours?',
            question_type: 7,
            options: ['Sorting', 'Driving'],
            allocation_input_type: 1,
            allocation_total: '10.0',
            allocation_decimal_places: 1,
          },
          answer: '',
          options: [],
          allocation_values: i % 2 === 0 ? { Sorting: '7.5', Driving: '2.5' } : null,
          auto_populated_lists: [{ id: rid(), title: 'Programs' }],
        },
      ],
      ...(i === 1 ? { medical_info: null } : {}),
      emergency_contact: i === 3 ? null : { name: 'Alex Doe', relationship: 'Parent', phone_number: '+1-555-0142' },
      digital_consent: [{ id: rid(), digital_consent_info: null, consent_status: 3 }],
      general_availability: [{ id: rid(), day: 2, availability: 'Morning' }],
      attachments:
        i % 2 === 0
          ? [{ id: rid(), document_file: null, notes: 'Scanned ID', attachment_info: { id: rid(), title: 'Photo ID', description: 'Government-issued ID' } }]
          : [],
      opportunities: [{ opportunity_id: opportunities[(i + 1) % opportunities.length]!, opportunity_shifts_count: i + 1 }],
    });
    if (i === 2) emit('FormSubmissionStatusChanged', { ...base, occurred_at: at(1), submission_id, submission_status: 'Reviewed' });
  });

  const sequence_id = rid();
  emit('SequenceCreated', {
    ...base,
    occurred_at: at(5),
    sequence_id,
    title: 'New Volunteer Onboarding',
    description: '<p>Everything a new volunteer completes before a first shift.</p>',
    folder: { id: rid(), name: 'Onboarding' },
    status: 'Published',
    display_status: 'Public',
  });
  const steps = [
    { step: 1, type: 1, type_display: 'Interview', title: 'Phone interview' },
    { step: 2, type: 3, type_display: 'Training', title: 'Food safety training' },
    { step: 3, type: 4, type_display: 'Orientation', title: 'Site orientation' },
  ].map((s) => {
    const step_id = rid();
    const detail = { id: rid(), title: s.title, description: `${s.type_display} step` };
    emit('SequenceStepAdded', { ...base, occurred_at: at(1), sequence_id, step_id, step: s.step, type: s.type, type_display: s.type_display, step_details: [detail] });
    return { step_id, detail };
  });
  const removed = rid();
  emit('SequenceStepAdded', { ...base, occurred_at: at(1), sequence_id, step_id: removed, step: 4, type: 2, type_display: 'Form', step_details: [{ id: rid(), title: 'Old form', description: 'Replaced' }] });
  emit('SequenceStepRemoved', { ...base, occurred_at: at(1), sequence_id, step_id: removed });
  const draft_id = rid();
  emit('SequenceCreated', {
    ...base,
    occurred_at: at(5),
    sequence_id: draft_id,
    title: 'Forklift Certification',
    description: '<p>For warehouse volunteers.</p>',
    folder: { id: rid(), name: 'Warehouse' },
    status: 'Draft',
    display_status: 'Private',
  });
  emit('SequenceUpdated', { ...base, occurred_at: at(1), sequence_id: draft_id, title: 'Forklift Certification (2026)' });

  const statuses = ['Active', 'Paused', 'Finished', 'Inactive', 'Active'] as const;
  profiles.slice(0, Math.min(5, profiles.length)).forEach((user_id, i) => {
    const user_sequence_id = rid();
    emit('UserSequenceStarted', { ...base, occurred_at: at(3), user_sequence_id, sequence_id, user_id, ...(i === 0 ? {} : { status: 'Active' }) });
    emit('UserSequenceStepUpdated', {
      ...base,
      occurred_at: at(1),
      user_sequence_id,
      step_detail_id: steps[0]!.detail.id,
      status: 2,
      completion_date: at(0),
      expiration_date: i % 2 === 0 ? null : '2027-08-01T00:00:00Z',
    });
    if (statuses[i] !== 'Active') emit('UserSequenceStatusChanged', { ...base, occurred_at: at(1), user_sequence_id, status: statuses[i]! });
  });
}

process.stdout.write(lines.join('\n') + '\n');
