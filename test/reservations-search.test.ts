/**
 * GET /api/reservations/search/ (issue 18 point 2), over the API on the
 * demo fixture: every filter against the reservations' own JSON (what the
 * list shows: the shift's start, its opportunity, its category), and a
 * shift's start moving moving its reservations with it (their updated_at
 * staying: only the nested shift changed). The engine's answers for random
 * data are in search-resources-property.test.ts.
 */
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { type DomainEvent, streamOf } from '../src/events/catalog.js';
import { DEMO_KEY, HARBOR_KEY, startApp } from './helpers.js';

const app = await startApp({ fixtures: ['demo.ndjson'] });
t.teardown(() => app.close());

interface Reservation {
  id: string;
  created_at: string;
  status: number;
  logged_hours: number;
  shift: { id: string; shift_start_at: string } | null;
  user: { id: string };
  opportunity: { id: string; category: { id: string } } | null;
}

async function all(path: string, key = DEMO_KEY): Promise<Reservation[]> {
  const out: Reservation[] = [];
  for (let page = 1; ; page++) {
    const { status, body } = await app.get(`${path}${path.includes('?') ? '&' : '?'}limit=100&page=${page}`, key);
    if (status !== 200) throw new Error(`${path}: ${status} ${JSON.stringify(body)}`);
    out.push(...(body.results as Reservation[]));
    if (body.next === null) return out;
  }
}

const everything = await all('/api/reservations/');
const ids = (list: Reservation[]) => list.map((r) => r.id);
const byCreated = (list: Reservation[]) => ids(list);

t.test('every filter selects what the records show, in created_at order', async (t) => {
  t.ok(everything.length > 20, `${everything.length} reservations`);
  const sample = everything[Math.floor(everything.length / 3)]!;
  const start = sample.shift!.shift_start_at;
  const day = start.slice(0, 10);
  const cases: Array<[string, (r: Reservation) => boolean]> = [
    [`id=${sample.id}`, (r) => r.id === sample.id],
    ['status=6', (r) => r.status === 6],
    ['status=1', (r) => r.status === 1],
    [`user.id=${sample.user.id}`, (r) => r.user.id === sample.user.id],
    [`user_id=${sample.user.id.toUpperCase()}`, (r) => r.user.id === sample.user.id],
    [`shift.id=${sample.shift!.id}`, (r) => r.shift?.id === sample.shift!.id],
    [`opportunity.id=${sample.opportunity!.id}`, (r) => r.opportunity?.id === sample.opportunity!.id],
    [`category.id=${sample.opportunity!.category.id}`, (r) => r.opportunity?.category.id === sample.opportunity!.category.id],
    [`shift_date=${day}`, (r) => r.shift?.shift_start_at.slice(0, 10) === day],
    [`shift_date.gte=${day}`, (r) => r.shift!.shift_start_at.slice(0, 10) >= day],
    [`shift_start_at.lt=${start}`, (r) => Date.parse(r.shift!.shift_start_at) < Date.parse(start)],
    [`created_at.gte=${sample.created_at}`, (r) => Date.parse(r.created_at) >= Date.parse(sample.created_at)],
    ['logged_hours.gt=2.5', (r) => r.logged_hours > 2.5],
    ['logged_hours=0', (r) => r.logged_hours === 0],
    [`status=6&shift_date.lt=${day}&category_id=${sample.opportunity!.category.id}`, (r) => r.status === 6 && r.shift!.shift_start_at.slice(0, 10) < day && r.opportunity?.category.id === sample.opportunity!.category.id],
  ];
  for (const [query, test] of cases) {
    const expected = everything.filter(test);
    t.same(ids(await all(`/api/reservations/search/?${query}`)), byCreated(expected), `${query}: ${expected.length}`);
  }
});

t.test('the list takes updated_at and its orderings only (other filters are ignored, as by every list)', async (t) => {
  t.same(ids(await all('/api/reservations/?status=6&shift_date=2026-09-01')), ids(everything));
  t.equal((await app.get('/api/reservations/?ordering=logged_hours')).status, 400);
  t.equal((await app.get('/api/reservations/?ordering=-updated_at&limit=1')).status, 200);
});

t.test('orderings: by shift start or logged hours, ties by created_at', async (t) => {
  const micros = (iso: string) => Date.parse(iso);
  const order = (key: (r: Reservation) => number) =>
    [...everything].sort((a, b) => key(a) - key(b) || micros(a.created_at) - micros(b.created_at) || (a.id < b.id ? -1 : 1)).map((r) => r.id);
  const starts = order((r) => micros(r.shift!.shift_start_at));
  const hours = order((r) => r.logged_hours);
  t.same(ids(await all('/api/reservations/search/?ordering=shift_start_at')), starts);
  t.same(ids(await all('/api/reservations/search/?ordering=-shift_start_at')), [...starts].reverse());
  t.same(ids(await all('/api/reservations/search/?ordering=logged_hours')), hours);
  t.same(ids(await all('/api/reservations/search/?ordering=-logged_hours')), [...hours].reverse());
});

t.test('a shift\'s start moving moves its reservations; their updated_at stays', async (t) => {
  const reserved = everything.find((r) => r.shift !== null)!;
  const shiftId = reserved.shift!.id;
  const ofShift = everything.filter((r) => r.shift?.id === shiftId);
  const moved = '2031-03-04T05:06:00Z';
  t.same(await all('/api/reservations/search/?shift_date=2031-03-04'), [], 'nothing that day yet');
  const before = (await app.get(`/api/reservations/${reserved.id}/`)).body;
  const event: DomainEvent = {
    type: 'ShiftUpdated',
    data: { institution_id: 'bf802b36-047d-4718-ad5b-ae9ed495b23f', occurred_at: '2026-11-20T10:00:00Z', shift_id: shiftId, shift_start_at: moved, shift_end_at: '2031-03-04T09:00:00Z' },
  };
  const { position } = await app.runtime.store.append(streamOf(event), [{ id: randomUUID(), type: event.type, data: event.data }]);
  await app.runtime.projector.waitFor(position);
  t.same(ids(await all('/api/reservations/search/?shift_date=2031-03-04')), ids(ofShift), 'every reservation of the shift, at its new start');
  t.same(ids(await all(`/api/reservations/search/?shift_start_at=${moved}`)), ids(ofShift));
  t.same((await all('/api/reservations/search/?ordering=-shift_start_at')).slice(0, ofShift.length).map((r) => r.id).sort(), ids(ofShift).sort(), 'first in -shift_start_at');
  const after = (await app.get(`/api/reservations/${reserved.id}/`)).body;
  t.equal(after.shift.shift_start_at, moved, 'the nested shift shows the new start');
  const record = app.runtime.model.get('reservation', reserved.id)!;
  t.equal(record.shift_start_at, Date.parse(moved) * 1000);
  t.same({ ...after, shift: null }, { ...before, shift: null }, 'nothing else changed');
  t.ok(
    (await all(`/api/reservations/search/?updated_at.gte=2026-11-20T10:00:00Z`)).every((r) => !ofShift.some((o) => o.id === r.id)),
    'their updated_at did not move',
  );
});

t.test('another institution\'s reservations are not there; bad values are a 400', async (t) => {
  const harbor = await all('/api/reservations/search/', HARBOR_KEY);
  t.ok(harbor.length > 0);
  t.notOk(harbor.some((r) => everything.some((e) => e.id === r.id)));
  const sample = everything[0]!;
  t.same(await all(`/api/reservations/search/?user.id=${sample.user.id}`, HARBOR_KEY), []);
  for (const [query, detail] of [
    ['logged_hours.gt=two', 'Invalid number value for logged_hours.gt.'],
    ['shift_date=2026-02-30', 'Invalid date format for shift_date.'],
    ['status=3', 'Invalid value for status.'],
    ['ordering=spots', 'Invalid ordering "spots": use one of created_at, -created_at, updated_at, -updated_at, shift_start_at, -shift_start_at, logged_hours, -logged_hours.'],
  ] as const) {
    t.same((await app.get(`/api/reservations/search/?${query}`)).body, { detail }, query);
  }
});
