/**
 * Every search endpoint besides shifts (see search-property.test.ts)
 * against a brute-force model: random records with many ties, random
 * filters under every name and alias (with range suffixes where they
 * apply), random orderings and pages. The engine, through the real query
 * schema, must give the same count and the same ids in the same order as
 * filtering every record with the semantics written out below and sorting
 * by created_at, then id.
 */
import fc from 'fast-check';
import t, { type Test } from 'tap';
import { blankProfile } from '../projections/profiles.js';
import { type Change, put } from '../projections/projection.js';
import type {
  FormSubmissionRecord,
  Kind,
  OpportunityRecord,
  ProfileRecord,
  Records,
  ReservationRecord,
  SequenceRecord,
  SiteRecord,
  UserSequenceRecord,
} from '../projections/records.js';
import { search, thresholds } from '../src/query/engine.js';
import { SortedIndex } from '../src/readmodel/sorted-index.js';
import type { ResourceDef } from '../src/query/resource.js';
import { searchSchema } from '../src/query/schema.js';
import { ReadModel } from '../src/readmodel/model.js';
import { resources, tableDefs } from '../src/resources/index.js';
import { formatDate, MICROS_PER_DAY } from '../src/time.js';

const INSTITUTION = '00000000-0000-4000-8000-000000000001';
const OTHER = '00000000-0000-4000-8000-000000000002';
const BASE_DAY = 20_600;
const MINUTE = 60_000_000;

type Op = 'eq' | 'gt' | 'gte' | 'lt' | 'lte';
const compare = (a: number, op: Op, b: number) =>
  op === 'eq' ? a === b : op === 'gt' ? a > b : op === 'gte' ? a >= b : op === 'lt' ? a < b : a <= b;
const same = (a: string | null | undefined, b: string) => typeof a === 'string' && a.toLowerCase() === b.toLowerCase();
const idOf = (n: number) => `${String(n).padStart(8, '0')}-0000-4000-8000-000000000000`;

/** A filter the model understands: the keys it is sent under, and values with their meaning. */
interface Condition<R> {
  readonly keys: readonly string[];
  readonly ranged: boolean;
  readonly values: fc.Arbitrary<{ text: string; test: (record: R, op: Op) => boolean }>;
}

const created = fc.tuple(fc.integer({ min: 0, max: 4 }), fc.integer({ min: 0, max: 3 }));
const createdAt = ([day, minute]: [number, number]) => (BASE_DAY + day) * MICROS_PER_DAY + minute * 30 * MINUTE;

const textIs = <R>(choices: readonly string[], of: (r: R) => string | null | undefined | readonly string[]) =>
  fc.constantFrom(...choices).map((v) => ({
    text: v,
    test: (r: R) => {
      const got = of(r);
      return Array.isArray(got) ? got.some((g: string) => same(g, v)) : same(got as string | null | undefined, v);
    },
  }));
/** Timestamps on the days `lastDay` days around BASE_DAY, up to `steps` steps of `stepMinutes` into a day, as a filter of `of`. */
const timestampIs = <R>(of: (r: R) => number, lastDay: number, stepMinutes: number, steps: number) =>
  fc.tuple(fc.integer({ min: -1, max: lastDay }), fc.integer({ min: 0, max: steps })).map(([day, step]) => {
    const v = (BASE_DAY + day) * MICROS_PER_DAY + step * stepMinutes * MINUTE;
    const iso = new Date(v / 1000).toISOString().replace('.000Z', 'Z');
    return { text: iso, test: (r: R, op: Op) => compare(of(r), op, v) };
  });
/** Dates around BASE_DAY, as a filter of the UTC day of `of`. */
const dateIs = <R>(of: (r: R) => number, lastDay: number) =>
  fc.integer({ min: BASE_DAY - 1, max: BASE_DAY + lastDay }).map((d) => ({
    text: formatDate(d),
    test: (r: R, op: Op) => compare(Math.floor(of(r) / MICROS_PER_DAY), op, d),
  }));
const createdAtIs = <R extends { created_at: number }>() => timestampIs<R>((r) => r.created_at, 5, 30, 4);
/** Changed later than made, by 0 to 3 times 45 minutes: ties, and orders other than created_at's. */
const updatedAt = (seed: [number, number], i: number) => createdAt(seed) + ((i * 7) % 4) * 45 * MINUTE;
const updatedAtIs = <R extends { updated_at: number }>() => timestampIs<R>((r) => r.updated_at, 5, 15, 8);
const createdDateIs = <R extends { created_at: number }>() => dateIs<R>((r) => r.created_at, 5);

// ── Records and conditions per resource ─────────────────────────────────────

const FIRST = ['Ana', 'ana', 'Ben'];
const LAST = ['Lopez', 'Chen'];
const TAGS = ['Youth', 'youth', 'Lead'];

const profileArb = fc.record({
  first: fc.constantFrom(...FIRST),
  last: fc.constantFrom(...LAST),
  email: fc.constantFrom('a@x.org', 'B@x.org'),
  phone: fc.constantFrom('', '+1-555'),
  offline: fc.boolean(),
  tags: fc.subarray(TAGS),
  created,
  other: fc.boolean(),
});

function profileOf(seed: typeof profileArb extends fc.Arbitrary<infer T> ? T : never, i: number): ProfileRecord {
  return {
    ...blankProfile(idOf(1000 + i), seed.other && i % 3 === 0 ? OTHER : INSTITUTION, createdAt(seed.created)),
    is_offline: seed.offline,
    first_name: seed.first,
    last_name: seed.last,
    email: seed.email,
    phone_number: seed.phone,
    tags: seed.tags.map((title, k) => ({ id: idOf(9000 + k), tag: { id: idOf(9100 + k), tag_title: title } })),
    updated_at: updatedAt(seed.created, i),
  };
}

const profileConditions: Condition<ProfileRecord>[] = [
  { keys: ['first_name'], ranged: false, values: textIs(['ANA', 'ben', 'x'], (p) => p.first_name) },
  { keys: ['last_name'], ranged: false, values: textIs(['lopez', 'Chen'], (p) => p.last_name) },
  { keys: ['email'], ranged: false, values: textIs(['b@x.org', 'A@X.ORG'], (p) => p.email) },
  { keys: ['phone_number'], ranged: false, values: textIs(['+1-555', 'none'], (p) => p.phone_number) },
  {
    keys: ['is_offline'],
    ranged: false,
    values: fc.constantFrom('true', 'false', 'True', '1', '0').map((v) => ({
      text: v,
      test: (p: ProfileRecord) => p.is_offline === (v.toLowerCase() === 'true' || v === '1'),
    })),
  },
  { keys: ['created_at'], ranged: true, values: createdAtIs<ProfileRecord>() },
  { keys: ['created_date'], ranged: true, values: createdDateIs<ProfileRecord>() },
  { keys: ['tag'], ranged: false, values: textIs(['YOUTH', 'lead', 'none'], (p) => p.tags.map((x) => x.tag.tag_title)) },
];

/**
 * The profiles the other resources refer to, in their institution (a
 * relation filter reads the related records of the same institution); not
 * added when profiles are what is searched.
 */
const USERS = [0, 1, 2].map((i) =>
  profileOf({ first: FIRST[i]!, last: LAST[i % 2]!, email: i === 1 ? 'B@x.org' : 'a@x.org', phone: '', offline: false, tags: [], created: [0, 0], other: false }, 900 + i),
);

const submissionArb = fc.record({
  user: fc.integer({ min: 0, max: 2 }),
  questions: fc.array(fc.record({ id: fc.constantFrom('q1', 'Q2', 'q3'), answer: fc.constantFrom('yes', 'No', '') }), { maxLength: 3 }),
  form: fc.constantFrom({ id: 'f1', title: 'Intake Form' }, { id: 'F2', title: 'Waiver' }),
  folder: fc.constantFrom('New', 'old'),
  created,
  other: fc.boolean(),
});

function submissionOf(seed: typeof submissionArb extends fc.Arbitrary<infer T> ? T : never, i: number): FormSubmissionRecord {
  return {
    id: idOf(2000 + i),
    institution_id: seed.other && i % 3 === 0 ? OTHER : INSTITUTION,
    user_id: USERS[seed.user]!.id,
    form: seed.form,
    folder: { name: seed.folder },
    submission_status: 'New',
    site_ids: [],
    category_ids: [],
    arrival_source_opportunity_id: null,
    questions: seed.questions.map((q, k) => ({ id: idOf(8000 + k), question: { id: q.id, title: 'Q', question_type: 1 }, answer: q.answer })),
    medical_info: null,
    emergency_contact: null,
    digital_consent: [],
    general_availability: [],
    attachments: [],
    opportunities: [],
    created_at: createdAt(seed.created),
    updated_at: updatedAt(seed.created, i),
  };
}

const userOf = (userId: string) => USERS.find((u) => u.id === userId)!;
const userConditions = <R extends { user_id: string }>(): Condition<R>[] => [
  { keys: ['user.id'], ranged: false, values: textIs([USERS[0]!.id, USERS[2]!.id.toUpperCase(), idOf(5)], (r: R) => r.user_id) },
  { keys: ['user.first_name'], ranged: false, values: textIs(['ana', 'BEN'], (r: R) => userOf(r.user_id).first_name) },
  { keys: ['user.last_name'], ranged: false, values: textIs(['LOPEZ', 'chen'], (r: R) => userOf(r.user_id).last_name) },
  { keys: ['user.email'], ranged: false, values: textIs(['a@x.org', 'b@X.org'], (r: R) => userOf(r.user_id).email) },
];

const submissionConditions: Condition<FormSubmissionRecord>[] = [
  { keys: ['created_at'], ranged: true, values: createdAtIs<FormSubmissionRecord>() },
  ...userConditions<FormSubmissionRecord>(),
  { keys: ['form.id'], ranged: false, values: textIs(['f1', 'f2'], (s) => s.form.id) },
  { keys: ['form.title'], ranged: false, values: textIs(['intake form', 'WAIVER'], (s) => s.form.title) },
  { keys: ['folder.name'], ranged: false, values: textIs(['new', 'OLD'], (s) => s.folder.name) },
];

const sequenceArb = fc.record({
  title: fc.constantFrom('Onboarding', 'onboarding', 'Training'),
  description: fc.constantFrom('', 'Steps'),
  status: fc.constantFrom('Published', 'Draft'),
  display: fc.constantFrom('Public', 'Private'),
  created,
  other: fc.boolean(),
});

function sequenceOf(seed: typeof sequenceArb extends fc.Arbitrary<infer T> ? T : never, i: number): SequenceRecord {
  return {
    id: idOf(3000 + i),
    institution_id: seed.other && i % 3 === 0 ? OTHER : INSTITUTION,
    title: seed.title,
    description: seed.description,
    folder: { id: idOf(1), name: 'F' },
    status: seed.status,
    display_status: seed.display,
    steps: [],
    users: { Active: 0, Paused: 0, Inactive: 0, Finished: 0 },
    created_at: createdAt(seed.created),
    updated_at: updatedAt(seed.created, i),
  };
}

const sequenceConditions: Condition<SequenceRecord>[] = [
  { keys: ['title'], ranged: false, values: textIs(['ONBOARDING', 'training'], (s) => s.title) },
  { keys: ['description'], ranged: false, values: textIs(['steps', 'x'], (s) => s.description) },
  { keys: ['status'], ranged: false, values: textIs(['published', 'DRAFT'], (s) => s.status) },
  { keys: ['display_status'], ranged: false, values: textIs(['public', 'Private'], (s) => s.display_status) },
  { keys: ['created_at'], ranged: true, values: createdAtIs<SequenceRecord>() },
  { keys: ['created_date'], ranged: true, values: createdDateIs<SequenceRecord>() },
];

const userSequenceArb = fc.record({ user: fc.integer({ min: 0, max: 2 }), created, other: fc.boolean() });

function userSequenceOf(seed: typeof userSequenceArb extends fc.Arbitrary<infer T> ? T : never, i: number): UserSequenceRecord {
  return {
    id: idOf(4000 + i),
    institution_id: seed.other && i % 3 === 0 ? OTHER : INSTITUTION,
    sequence_id: idOf(3),
    user_id: USERS[seed.user]!.id,
    status: 'Active',
    progress: {},
    created_at: createdAt(seed.created),
    updated_at: updatedAt(seed.created, i),
  };
}

const userSequenceConditions: Condition<UserSequenceRecord>[] = [
  { keys: ['created_at'], ranged: true, values: createdAtIs<UserSequenceRecord>() },
  ...userConditions<UserSequenceRecord>(),
];

const siteArb = fc.record({ title: fc.constantFrom('North', 'north ', 'South'), users: fc.subarray([0, 1, 2]), created, other: fc.boolean() });

function siteOf(seed: typeof siteArb extends fc.Arbitrary<infer T> ? T : never, i: number): SiteRecord {
  return {
    id: idOf(5000 + i),
    institution_id: seed.other && i % 3 === 0 ? OTHER : INSTITUTION,
    title: seed.title,
    address: '',
    user_ids: seed.users.map((u) => USERS[u]!.id),
    created_at: createdAt(seed.created),
    updated_at: updatedAt(seed.created, i),
  };
}

const siteConditions: Condition<SiteRecord>[] = [
  { keys: ['title'], ranged: false, values: textIs(['NORTH', 'south'], (s) => s.title.trim()) },
  { keys: ['user.id'], ranged: false, values: textIs([USERS[1]!.id, USERS[2]!.id.toUpperCase()], (s) => s.user_ids) },
];

/** The opportunities reservations refer to (category.id is read through them): two categories, and one opportunity of another institution. */
const OPPORTUNITIES: OpportunityRecord[] = [0, 1, 2].map((i) => ({
  id: idOf(7000 + i),
  institution_id: i === 2 ? OTHER : INSTITUTION,
  category_id: idOf(7100 + (i % 2)),
  title: 'O',
  description: '',
  status: 1,
  created_at: createdAt([0, 0]),
  updated_at: createdAt([0, 0]),
}));
const HOURS = [0, 1.5, 2, 2.25, 8];

const reservationArb = fc.record({
  user: fc.integer({ min: 0, max: 2 }),
  shift: fc.integer({ min: 0, max: 3 }),
  opportunity: fc.integer({ min: 0, max: 2 }),
  start: fc.tuple(fc.integer({ min: -1, max: 3 }), fc.integer({ min: 0, max: 3 })),
  hours: fc.constantFrom(...HOURS),
  created,
  other: fc.boolean(),
});

function reservationOf(seed: typeof reservationArb extends fc.Arbitrary<infer T> ? T : never, i: number): ReservationRecord {
  return {
    id: idOf(6000 + i),
    institution_id: seed.other && i % 3 === 0 ? OTHER : INSTITUTION,
    shift_id: idOf(6500 + seed.shift),
    opportunity_id: OPPORTUNITIES[seed.opportunity]!.id,
    shift_start_at: createdAt(seed.start),
    user_id: USERS[seed.user]!.id,
    status: seed.hours > 0 ? 6 : 1,
    logged_hours: seed.hours,
    arrival_time: null,
    departure_time: null,
    hours_approved_by: null,
    created_at: createdAt(seed.created),
    updated_at: updatedAt(seed.created, i),
  };
}

const reservationConditions: Condition<ReservationRecord>[] = [
  { keys: ['id'], ranged: false, values: textIs([idOf(6000), idOf(6003).toUpperCase(), idOf(5)], (r) => r.id) },
  { keys: ['user.id', 'user_id'], ranged: false, values: textIs([USERS[0]!.id, USERS[2]!.id.toUpperCase(), idOf(5)], (r) => r.user_id) },
  { keys: ['shift.id', 'shift_id'], ranged: false, values: textIs([idOf(6500), idOf(6502).toUpperCase(), idOf(5)], (r) => r.shift_id) },
  { keys: ['opportunity.id', 'opportunity_id'], ranged: false, values: textIs([idOf(7000), idOf(7002)], (r) => r.opportunity_id) },
  {
    keys: ['category.id', 'category_id'],
    ranged: false,
    // Through the opportunity, of the institution only (the other institution's opportunity holds category 7100 too).
    values: textIs([idOf(7100), idOf(7101).toUpperCase()], (r) => {
      const opportunity = OPPORTUNITIES.find((o) => o.id === r.opportunity_id && o.institution_id === INSTITUTION);
      return opportunity?.category_id;
    }),
  },
  {
    keys: ['status'],
    ranged: false,
    values: fc.constantFrom(1, 6).map((v) => ({ text: String(v), test: (r: ReservationRecord) => r.status === v })),
  },
  { keys: ['created_at'], ranged: true, values: createdAtIs<ReservationRecord>() },
  { keys: ['shift_start_at'], ranged: true, values: timestampIs<ReservationRecord>((r) => r.shift_start_at, 4, 30, 4) },
  { keys: ['shift_date'], ranged: true, values: dateIs<ReservationRecord>((r) => r.shift_start_at, 4) },
  {
    keys: ['logged_hours'],
    ranged: true,
    values: fc.constantFrom(0, 1.5, 2, 2.5, 8).map((v) => ({ text: String(v), test: (r: ReservationRecord, op: Op) => compare(r.logged_hours, op, v) })),
  },
];

// ── The property, for any resource ──────────────────────────────────────────

interface Case<K extends Kind> {
  readonly def: ResourceDef<K>;
  readonly records: fc.Arbitrary<Records[K][]>;
  readonly conditions: readonly Condition<Records[K]>[];
  /** Extra filters the model applies on its own (form submissions' question pairs). */
  readonly extra?: fc.Arbitrary<{ raw: Record<string, string>; test: (r: Records[K]) => boolean }>;
  /** What an ordering sorts by before created_at, where it is not updated_at (by its name without the -). */
  readonly sortedBy?: Readonly<Record<string, (r: Records[K]) => number>>;
  /** Records of other kinds the searched ones refer to. */
  readonly related?: readonly Change[];
}

function property<K extends Kind>(t: Test, theCase: Case<K>): void {
  // As configured, then with the engine's thresholds lowered so that these few rows meet every strategy.
  for (const lowered of [false, true]) {
    const saved = { ...thresholds };
    const zones = { after: SortedIndex.zoneAfter, rows: SortedIndex.zoneRows };
    if (lowered) {
      Object.assign(thresholds, { maxSorted: 4, small: 0, markFrom: 0, alongFrom: 0 });
      // Walks skip zones of 2 positions from the first.
      SortedIndex.zoneAfter = 0;
      SortedIndex.zoneRows = 2;
    }
    try {
      compareWithModel(t, theCase, lowered ? ' (thresholds lowered)' : '');
    } finally {
      Object.assign(thresholds, saved);
      SortedIndex.zoneAfter = zones.after;
      SortedIndex.zoneRows = zones.rows;
    }
  }
}

function compareWithModel<K extends Kind>(t: Test, { def, records, conditions: own, extra, sortedBy, related }: Case<K>, regime: string): void {
  const schema = searchSchema(def);
  // Every resource here takes updated_at (sync).
  const conditions: readonly Condition<Records[K]>[] = [...own, { keys: ['updated_at'], ranged: true, values: updatedAtIs<Records[K]>() }];
  const orderings = Object.keys(def.orderings);
  const filter = fc.constantFrom(...conditions).chain((c) =>
    fc.record({
      key: fc.constantFrom(...c.keys),
      op: c.ranged ? fc.constantFrom<Op>('eq', 'gt', 'gte', 'lt', 'lte') : fc.constant<Op>('eq'),
      value: c.values,
    }),
  );
  const query = fc.record({
    filters: fc.array(filter, { maxLength: 3 }),
    extra: extra ? fc.option(extra, { nil: undefined }) : fc.constant(undefined),
    ordering: orderings.length > 0 ? fc.option(fc.constantFrom(...orderings), { nil: undefined }) : fc.constant(undefined),
    limit: fc.integer({ min: 1, max: 7 }),
    page: fc.integer({ min: 1, max: 4 }),
  });
  let compared = 0;
  fc.assert(
    fc.property(records, fc.array(query, { minLength: 4, maxLength: 4 }), (list, queries) => {
      const model = new ReadModel(tableDefs);
      if (def.kind !== 'profile') for (const u of USERS) model.apply(put('profile', u));
      for (const change of related ?? []) model.apply(change);
      for (const r of list) model.apply(put(def.kind, r) as never);
      model.flush();
      const table = model.table(def.kind, INSTITUTION);
      const visible = list.filter((r) => (r as { institution_id: string }).institution_id === INSTITUTION);
      for (const q of queries) {
        const raw: Record<string, string> = { page: String(q.page), limit: String(q.limit) };
        const tests: Array<(r: Records[K]) => boolean> = [];
        for (const f of q.filters) {
          const key = f.op === 'eq' ? f.key : `${f.key}.${f.op}`;
          if (key in raw) continue;
          raw[key] = f.value.text;
          tests.push((r) => f.value.test(r, f.op));
        }
        if (q.extra) {
          Object.assign(raw, q.extra.raw);
          tests.push(q.extra.test);
        }
        if (q.ordering) raw.ordering = q.ordering;
        const parsed = schema.parse(raw);
        const offset = (parsed.page - 1) * parsed.limit;
        const before = search(table, parsed, offset, parsed.limit, model, def.groups);
        // Again with the zone maps it wanted made (the server makes them in the background): the same answer.
        model.makeZoneMaps(Infinity);
        const got = search(table, parsed, offset, parsed.limit, model, def.groups);
        if (got.count !== before.count || got.rows.join() !== before.rows.join()) throw new Error(`${JSON.stringify(raw)}: another answer once zone maps were made`);
        const matching = visible.filter((r) => tests.every((test) => test(r)));
        // By updated_at when asked, ties (and otherwise) by created_at, then id; a leading - reverses it all.
        const byUpdated = q.ordering?.endsWith('updated_at') ?? false;
        const first = q.ordering === undefined ? undefined : sortedBy?.[q.ordering.replace(/^-/, '')];
        const sorted = [...matching].sort(
          (a, b) =>
            (byUpdated ? a.updated_at - b.updated_at : 0) || (first ? first(a) - first(b) : 0) || a.created_at - b.created_at || (a.id < b.id ? -1 : 1),
        );
        if (q.ordering?.startsWith('-')) sorted.reverse();
        const expected = sorted.slice(offset, offset + parsed.limit).map((r) => r.id);
        const ids = got.rows.map((row) => table!.record(row).id);
        const context = JSON.stringify(raw);
        if (got.count !== matching.length) throw new Error(`${context}: count ${got.count}, expected ${matching.length}`);
        if (ids.join() !== expected.join()) throw new Error(`${context}: ${ids.join()} expected ${expected.join()}`);
        compared++;
      }
    }),
    { numRuns: 150 },
  );
  t.ok(compared >= 600, `/api/${def.path}: ${compared} queries compared with the brute-force model${regime}`);
}

const records = <S, R>(arb: fc.Arbitrary<S>, make: (seed: S, i: number) => R) =>
  fc.array(arb, { maxLength: 60 }).map((seeds) => seeds.map(make));

/** question.id and question.answer (or answer), alone or together: then they must hold for the same question. */
const questionPair = fc
  .record({ id: fc.option(fc.constantFrom('q1', 'q2', 'Q3'), { nil: undefined }), answer: fc.option(fc.constantFrom('YES', 'no', 'maybe'), { nil: undefined }), alias: fc.boolean() })
  .filter((p) => p.id !== undefined || p.answer !== undefined)
  .map(({ id, answer, alias }) => ({
    raw: { ...(id === undefined ? {} : { 'question.id': id }), ...(answer === undefined ? {} : { [alias ? 'answer' : 'question.answer']: answer }) },
    test: (s: FormSubmissionRecord) =>
      s.questions.some((q) => (id === undefined || same(q.question.id, id)) && (answer === undefined || same(q.answer ?? '', answer))),
  }));

t.test('profiles search', async (t) =>
  property(t, { def: resources.profiles, records: records(profileArb, profileOf), conditions: profileConditions }),
);
t.test('form submissions search', async (t) =>
  property(t, {
    def: resources.formSubmissions,
    records: records(submissionArb, submissionOf),
    conditions: submissionConditions,
    extra: questionPair,
  }),
);
t.test('sequences search', async (t) =>
  property(t, { def: resources.sequences, records: records(sequenceArb, sequenceOf), conditions: sequenceConditions }),
);
t.test('user sequences search', async (t) =>
  property(t, { def: resources.userSequences, records: records(userSequenceArb, userSequenceOf), conditions: userSequenceConditions }),
);
t.test('sites list filters', async (t) =>
  property(t, { def: resources.sites, records: records(siteArb, siteOf), conditions: siteConditions }),
);
t.test('reservations search', async (t) =>
  property(t, {
    def: resources.reservations,
    records: records(reservationArb, reservationOf),
    conditions: reservationConditions,
    sortedBy: { shift_start_at: (r) => r.shift_start_at, logged_hours: (r) => r.logged_hours },
    related: OPPORTUNITIES.map((o) => put('opportunity', o)),
  }),
);

t.test('every column a filter of a resource constrains leads one of its table\'s indexes (no filter alone is a scan of the table)', async (t) => {
  let checked = 0;
  for (const def of Object.values(resources) as ResourceDef<Kind>[]) {
    const led = new Set(def.indexes.map((index) => index.keys[0]));
    for (const param of def.params) {
      // Values a record holds several of are in postings; a group's items are tested; the id is the row lookup.
      if ('value' in param && param.value !== undefined) continue;
      if ('group' in param && param.group !== undefined) continue;
      if ('primaryKey' in param && param.primaryKey) continue;
      const column = 'symbol' in param && param.symbol !== undefined ? param.symbol : 'through' in param && param.through !== undefined ? param.through.symbol : 'column' in param ? param.column : undefined;
      t.ok(column !== undefined && led.has(column), `/api/${def.path}: ${param.name} (column ${column})`);
      checked++;
    }
  }
  t.ok(checked > 40, `${checked} filters checked`);
});
