/**
 * Live updates through the log reach every place that shows a record,
 * including the cached JSON of records that nest it.
 */
import { createHash, randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import t from 'tap';
import { type EventType, streamOf, type DomainEvent } from '../src/events/catalog.js';
import type { Records } from '../projections/records.js';
import { ReadModel } from '../src/readmodel/model.js';
import { tableDefs } from '../src/resources/index.js';
import { mulberry32 } from '../scripts/random.js';
import { HARBOR_KEY, startApp } from './helpers.js';

t.test('a retitled opportunity and category show in the shifts that nest them', async (t) => {
  const app = await startApp({ fixtures: ['demo.ndjson'] });
  t.teardown(() => app.close());
  const before = await app.get('/api/shifts/?limit=100');
  const shift = before.body.results[0];
  const opportunityId: string = shift.opportunity.id;
  const categoryId: string = shift.opportunity.category.id;
  const institutionId = app.runtime.model.get('opportunity', opportunityId)!.institution_id;

  const append = async <T extends EventType>(type: T, data: Extract<DomainEvent, { type: T }>['data']) => {
    const event = { type, data } as DomainEvent;
    const { position } = await app.runtime.store.append(streamOf(event), [{ id: randomUUID(), type, data }]);
    await app.runtime.projector.waitFor(position);
  };
  const occurred_at = '2026-11-01T12:00:00Z';
  await append('OpportunityUpdated', { institution_id: institutionId, occurred_at, opportunity_id: opportunityId, title: 'Renamed role' });
  await append('CategoryUpdated', { institution_id: institutionId, occurred_at, category_id: categoryId, title: 'Renamed category' });

  const after = await app.get('/api/shifts/?limit=100');
  const nesting = after.body.results.filter((s: { opportunity: { id: string } }) => s.opportunity.id === opportunityId);
  t.ok(nesting.length > 0);
  for (const s of nesting) {
    t.equal(s.opportunity.title, 'Renamed role', 'the list shows the new opportunity title');
    t.equal(s.opportunity.category.title, 'Renamed category', 'and the new category title');
  }
  const one = await app.get(`/api/shifts/${shift.id}/`);
  t.equal(one.body.opportunity.title, 'Renamed role', 'so does retrieve');
  const opportunity = await app.get(`/api/opportunities/${opportunityId}/`);
  t.equal(opportunity.body.category.title, 'Renamed category', 'and the opportunity itself');
  const search = await app.get(`/api/shifts/search/?opportunity.title=renamed%20role&limit=1`);
  const byId = await app.get(`/api/shifts/search/?opportunity.id=${opportunityId}&limit=1`);
  t.ok(byId.body.count > 0);
  t.equal(search.body.count, byId.body.count, 'searches filter on the new title');
  t.equal(search.body.results[0].opportunity.title, 'Renamed role');
  const others = after.body.results.filter((s: { opportunity: { id: string } }) => s.opportunity.id !== opportunityId);
  const untouched = before.body.results.filter((s: { opportunity: { id: string } }) => s.opportunity.id !== opportunityId);
  t.same(
    others.map((s: { opportunity: { title: string } }) => s.opportunity.title),
    untouched.map((s: { opportunity: { title: string } }) => s.opportunity.title),
    'other shifts are unchanged',
  );
});

t.test('relation filters follow a change of the records they go through at once (an opportunity moved to another category, a category retitled)', async (t) => {
  const app = await startApp({ fixtures: ['demo.ndjson'] });
  t.teardown(() => app.close());
  const shift = (await app.get('/api/shifts/?limit=1')).body.results[0];
  const opportunityId: string = shift.opportunity.id;
  const from: { id: string; title: string } = shift.opportunity.category;
  const opportunities = (await app.get('/api/opportunities/?limit=100')).body.results as Array<{ category: { id: string; title: string } }>;
  const categories = opportunities.map((o) => o.category);
  const to = categories.find((c) => c.id !== from.id && c.title.toLowerCase() !== from.title.toLowerCase())!;
  t.ok(to, 'the demo has another category');
  const institutionId = app.runtime.model.get('opportunity', opportunityId)!.institution_id;
  const count = async (path: string) => {
    const answer = await app.get(path);
    t.equal(answer.status, 200, path);
    return answer.body.count as number;
  };
  const q = encodeURIComponent;
  const counts = async () => ({
    shiftsFrom: await count(`/api/shifts/search/?category.id=${from.id}&limit=1`),
    shiftsTo: await count(`/api/shifts/search/?category_id=${to.id}&limit=1`),
    shiftsToByTitle: await count(`/api/shifts/search/?category.title=${q(to.title)}&limit=1`),
    reservationsFrom: await count(`/api/reservations/search/?category.id=${from.id}&limit=1`),
    opportunitiesToByTitle: await count(`/api/opportunities/search/?category.title=${q(to.title)}&limit=1`),
  });
  // Asked twice: the second answers come from what the first remembered.
  const before = await counts();
  t.same(await counts(), before, 'the same counts asked again');
  const moved = await count(`/api/shifts/search/?opportunity.id=${opportunityId}&limit=1`);
  const movedReservations = await count(`/api/reservations/search/?opportunity.id=${opportunityId}&limit=1`);
  t.ok(moved > 0 && movedReservations > 0, 'the opportunity has shifts and reservations');
  t.equal(before.shiftsToByTitle, before.shiftsTo, 'by title as by id');

  const append = async <T extends EventType>(type: T, data: Extract<DomainEvent, { type: T }>['data']) => {
    const event = { type, data } as DomainEvent;
    const { position } = await app.runtime.store.append(streamOf(event), [{ id: randomUUID(), type, data }]);
    await app.runtime.projector.waitFor(position);
  };
  const occurred_at = '2026-11-02T12:00:00Z';
  await append('OpportunityUpdated', { institution_id: institutionId, occurred_at, opportunity_id: opportunityId, category_id: to.id });
  const after = await counts();
  t.same(
    after,
    {
      shiftsFrom: before.shiftsFrom - moved,
      shiftsTo: before.shiftsTo + moved,
      shiftsToByTitle: before.shiftsTo + moved,
      reservationsFrom: before.reservationsFrom - movedReservations,
      opportunitiesToByTitle: before.opportunitiesToByTitle + 1,
    },
    'the opportunity\'s shifts and reservations moved with it',
  );

  await append('CategoryUpdated', { institution_id: institutionId, occurred_at, category_id: to.id, title: 'Moved here' });
  t.equal(await count(`/api/shifts/search/?category.title=moved%20here&limit=1`), after.shiftsTo, 'shifts found by the new title (through two relations)');
  t.equal(await count(`/api/opportunities/search/?category.title=moved%20here&limit=1`), after.opportunitiesToByTitle, 'opportunities too');
  t.equal(await count(`/api/shifts/search/?category.title=${q(to.title)}&limit=1`), 0, 'and none by the old one');
});

t.test('a key revoked while the server runs is refused from the next request on', async (t) => {
  const app = await startApp({ fixtures: ['demo.ndjson'] });
  t.teardown(() => app.close());
  const opportunity = (await app.get('/api/opportunities/?limit=1')).body.results[0];
  const institution_id = app.runtime.model.get('opportunity', opportunity.id)!.institution_id;
  const key = 'vm_test_live_revocation_key';
  const key_id = randomUUID();
  const occurred_at = '2026-11-01T12:00:00Z';
  const append = async (type: 'ApiKeyIssued' | 'ApiKeyRevoked', data: Record<string, unknown>) => {
    const event = { type, data: { institution_id, occurred_at, key_id, ...data } } as DomainEvent;
    const { position } = await app.runtime.store.append(streamOf(event), [{ id: randomUUID(), type, data: event.data }]);
    await app.runtime.projector.waitFor(position);
  };
  await append('ApiKeyIssued', { key_sha256: createHash('sha256').update(key).digest('hex'), label: 'test' });
  t.equal((await app.get('/api/shifts/', key)).status, 200, 'the new key works');
  t.equal((await app.get('/api/shifts/', key)).status, 200, 'again (its hash now remembered)');
  await append('ApiKeyRevoked', {});
  const refused = await app.get('/api/shifts/', key);
  t.equal(refused.status, 401, 'the revoked key is refused at once');
  t.same(refused.body, { detail: 'Invalid API key.' });
});

t.test('a renamed profile shows in the reservations that nest it; logged hours add up', async (t) => {
  const app = await startApp({ fixtures: ['demo.ndjson'] });
  t.teardown(() => app.close());
  const reservations = (await app.get('/api/reservations/?limit=100')).body.results as Array<{
    id: string;
    status: number;
    logged_hours: number;
    user: { id: string; first_name: string };
  }>;
  const logged = reservations.find((r) => r.status === 6)!;
  const userId = logged.user.id;
  const institution_id = app.runtime.model.get('profile', userId)!.institution_id;
  const hoursOf = async () => {
    const all = [];
    for (let page = 1; ; page++) {
      const res = await app.get(`/api/reservations/?limit=100&page=${page}`);
      if (res.status !== 200) break;
      all.push(...(res.body.results as typeof reservations));
      if (!res.body.next) break;
    }
    const mine = all.filter((r) => r.user.id === userId && r.status === 6);
    return { hours: mine.reduce((sum, r) => sum + r.logged_hours, 0), completed: mine.length };
  };
  const profile = (await app.get(`/api/profiles/${userId}/`)).body;
  t.same({ hours: profile.logged_hours, completed: profile.completed_shifts }, await hoursOf(), 'logged_hours and completed_shifts sum the reservations with hours');

  const event = { type: 'ProfileUpdated', data: { institution_id, occurred_at: '2026-11-01T12:00:00Z', profile_id: userId, first_name: 'Renamed' } } as DomainEvent;
  const { position } = await app.runtime.store.append(streamOf(event), [{ id: randomUUID(), type: event.type, data: event.data }]);
  await app.runtime.projector.waitFor(position);
  const after = (await app.get(`/api/reservations/${logged.id}/`)).body;
  t.equal(after.user.first_name, 'Renamed', 'the reservation shows the current profile');
  t.equal((await app.get(`/api/profiles/${userId}/`)).body.profile_details.full_name.split(' ')[0], 'Renamed');
});

t.test('every place that nests a record shows its current version', async (t) => {
  const app = await startApp({ fixtures: ['demo.ndjson'] });
  t.teardown(() => app.close());
  const all = async (path: string) => {
    const out: any[] = [];
    for (let page = 1; ; page++) {
      const res = await app.get(`/api/${path}/?limit=100&page=${page}`);
      out.push(...res.body.results);
      if (!res.body.next) return out;
    }
  };
  const append = async (type: string, data: Record<string, unknown>) => {
    const event = { type, data: { occurred_at: '2026-11-01T12:00:00Z', ...data } } as DomainEvent;
    const { position } = await app.runtime.store.append(streamOf(event), [{ id: randomUUID(), type, data: event.data }]);
    await app.runtime.projector.waitFor(position);
  };

  // A profile that has a reservation, a form submission and a user sequence.
  const userSequence = (await all('user-sequences'))[0];
  const userId: string = userSequence.user_info.id;
  const institution_id = app.runtime.model.get('profile', userId)!.institution_id;
  await append('ProfileUpdated', { institution_id, profile_id: userId, last_name: 'Newname' });
  const submissions = (await all('form-submissions')).filter((s) => s.user.id === userId);
  const sequences = (await all('user-sequences')).filter((u) => u.user_info.id === userId);
  t.ok(submissions.length > 0 && sequences.length > 0, 'the profile is nested in submissions and user sequences');
  for (const s of submissions) t.equal(s.user.last_name, 'Newname', 'form submission user');
  for (const u of sequences) t.equal(u.user_info.last_name, 'Newname', 'user sequence user_info');
  t.equal((await app.get(`/api/form-submissions/search/?user.last_name=newname`)).body.count, submissions.length, 'search by the new name');

  // A category nested in opportunities, shifts, profiles' opportunities, reservations and submissions.
  const submission = (await all('form-submissions')).find((s) => s.categories.length > 0 && s.arrival_source);
  const categoryId: string = submission.arrival_source.category.id;
  await append('CategoryUpdated', { institution_id, category_id: categoryId, title: 'Retitled' });
  const check = (label: string, categories: Array<{ id?: string; title: string } | undefined>) => {
    t.ok(categories.length > 0, `${label}: some nest the category`);
    t.ok(categories.every((c) => c?.title === 'Retitled'), `${label}: show the new title`);
  };
  const opportunitiesIn = (await all('opportunities')).filter((o) => o.category.id === categoryId);
  check('opportunities', opportunitiesIn.map((o) => o.category));
  const ids = new Set(opportunitiesIn.map((o) => o.id));
  check('shifts', (await all('shifts')).filter((s) => ids.has(s.opportunity.id)).map((s) => s.opportunity.category));
  check('reservations', (await all('reservations')).filter((r) => ids.has(r.opportunity.id)).map((r) => r.opportunity.category));
  check(
    'profiles',
    (await all('profiles')).flatMap((p) => p.opportunities.filter((o: any) => ids.has(o.opportunity.id)).map((o: any) => o.opportunity.category)),
  );
  const afterSubmissions = await all('form-submissions');
  check('submission categories', afterSubmissions.flatMap((s) => s.categories.filter((c: any) => c.id === categoryId)));
  check('submission arrival sources', afterSubmissions.filter((s) => s.arrival_source?.category.id === categoryId).map((s) => s.arrival_source.category));

  // An opportunity unpublished: its share URL is gone wherever it shows one.
  const published = opportunitiesIn.find((o) => o.share_opportunity_url !== null);
  await append('OpportunityStatusChanged', { institution_id, opportunity_id: published.id, status: 2 });
  t.equal((await app.get(`/api/opportunities/${published.id}/`)).body.share_opportunity_url, null, 'the opportunity');
  const nesting = (await all('shifts')).filter((s) => s.opportunity.id === published.id);
  t.ok(nesting.length > 0 && nesting.every((s) => s.opportunity.share_opportunity_url === null), 'every shift that nests it');
  t.equal((await app.get(`/api/opportunities/search/?status=2&id=${published.id}`)).body.count, 1, 'and searches see the status');
});

t.test("an event of one institution cannot change another institution's records", async (t) => {
  const app = await startApp({ fixtures: ['demo.ndjson'] });
  t.teardown(() => app.close());
  const shift = (await app.get('/api/shifts/?limit=1')).body.results[0];
  const riverside = app.runtime.model.get('shift', shift.id)!.institution_id;
  const harborShift = (await app.get('/api/shifts/?limit=1', HARBOR_KEY)).body.results[0];
  const harbor = app.runtime.model.get('shift', harborShift.id)!.institution_id;
  t.not(harbor, riverside);

  // Straight into the log, as another writer could (the importer refuses such references).
  const occurred_at = '2026-11-01T12:00:00Z';
  const events: DomainEvent[] = [
    { type: 'ShiftUpdated', data: { institution_id: harbor, occurred_at, shift_id: shift.id, title: 'Taken over' } },
    { type: 'ShiftRemoved', data: { institution_id: harbor, occurred_at, shift_id: shift.id } },
    {
      type: 'ReservationCreated',
      data: { institution_id: harbor, occurred_at, reservation_id: randomUUID(), shift_id: shift.id, user_id: randomUUID() },
    },
  ];
  for (const event of events) {
    const { position } = await app.runtime.store.append(streamOf(event), [{ id: randomUUID(), type: event.type, data: event.data }]);
    await app.runtime.projector.waitFor(position);
  }
  t.same((await app.get(`/api/shifts/${shift.id}/`)).body, shift, 'the shift reads as before');
  t.equal(app.runtime.model.get('shift', shift.id)!.institution_id, riverside);
  t.equal((await app.get(`/api/shifts/${shift.id}/`, HARBOR_KEY)).status, 404, 'and is still not the other institution’s');

  // The same holds for the control: an event of the shift's own institution does change it.
  const own: DomainEvent = { type: 'ShiftUpdated', data: { institution_id: riverside, occurred_at, shift_id: shift.id, title: 'Renamed' } };
  const { position } = await app.runtime.store.append(streamOf(own), [{ id: randomUUID(), type: own.type, data: own.data }]);
  await app.runtime.projector.waitFor(position);
  t.equal((await app.get(`/api/shifts/${shift.id}/`)).body.title, 'Renamed');
});

t.test('a large batch from the log is folded in slices, requests answered between them', async (t) => {
  const app = await startApp({ fixtures: ['demo.ndjson'] });
  t.teardown(() => app.close());
  const template = app.runtime.model.get('shift', (await app.get('/api/shifts/?limit=1')).body.results[0].id)!;
  const { institution_id, opportunity_id } = template;
  const shifts = Array.from({ length: 5000 }, (_, i) => ({
    institution_id,
    occurred_at: '2026-11-01T12:00:00Z',
    shift_id: randomUUID(),
    opportunity_id,
    title: `Sliced shift ${i}`,
    shift_start_at: '2026-12-01T09:00:00Z',
    shift_end_at: '2026-12-01T11:00:00Z',
    spots: 1 + (i % 9),
  }));
  const before = (await app.get('/api/shifts/?limit=1')).body.count as number;
  // One read batch of the log (5,000 events) arrives as an import's chunk does.
  const { position } = await app.runtime.store.appendMany(
    shifts.map((data) => ({ stream: `shift-${data.shift_id}`, events: [{ id: randomUUID(), type: 'ShiftCreated', data }] })),
  );
  let turns = 0;
  let done = false;
  const tick = (): void => {
    if (done) return;
    turns += 1;
    setImmediate(tick);
  };
  setImmediate(tick);
  const applying = app.runtime.projector.waitFor(position!);
  // Served while the batch is folded: the count is the old one or, once the slices are done, the new one.
  const during = (await app.get('/api/shifts/?limit=1')).body.count as number;
  await applying;
  done = true;
  t.ok(turns > 2, `the event loop turned ${turns} times while 5,000 events were folded`);
  t.ok(during >= before && during <= before + 5000, 'a request during the fold was answered');
  t.equal((await app.get('/api/shifts/?limit=1')).body.count, before + 5000, 'every shift of the batch is listed after it');
});

for (const shiftCount of [300, 5000]) {
  // (With 5,000 shifts most hold one reservation or two: the map holds one id alone, not in an array.)
  t.test(`the shift → reservations map made a slice at a time stays right under changes made meanwhile (${shiftCount} shifts)`, async (t) => {
    const model = new ReadModel(tableDefs);
    model.deferTables();
    const institution_id = randomUUID();
    const shifts = Array.from({ length: shiftCount }, () => randomUUID());
    const rand = mulberry32(7);
    const held = new Map<string, string>(); // reservation → shift, the brute force
    const reserve = () => {
      const id = randomUUID();
      const shift_id = shifts[Math.floor(rand() * shifts.length)]!;
      model.apply({ kind: 'reservation', id, record: { id, institution_id, shift_id } as unknown as Records['reservation'] });
      held.set(id, shift_id);
    };
    const cancel = () => {
      const ids = [...held.keys()];
      const id = ids[Math.floor(rand() * ids.length)]!;
      model.apply({ kind: 'reservation', id, record: null });
      held.delete(id);
    };
    for (let i = 0; i < 5000; i++) reserve();
    // Made 1,023 reservations a step (a deadline already past), with reservations added and cancelled between steps.
    let steps = 0;
    while (model.noteReservations(0)) {
      steps++;
      for (let i = 0; i < 50; i++) (rand() < 0.5 ? reserve : cancel)();
    }
    t.ok(steps >= 4, `made in ${steps + 1} steps`);
    for (let i = 0; i < 200; i++) (rand() < 0.5 ? reserve : cancel)();
    const byShift = new Map<string, string[]>();
    for (const [id, shift] of held) byShift.set(shift, [...(byShift.get(shift) ?? []), id]);
    const wrong = shifts.filter((shift) => !isDeepStrictEqual([...model.reservationsOf(shift)].sort(), (byShift.get(shift) ?? []).sort()));
    const counts = new Set(shifts.map((shift) => Math.min(byShift.get(shift)?.length ?? 0, 2)));
    t.same(wrong, [], `every shift's reservations, of ${shifts.length}`);
    if (shiftCount > 300) t.same([...counts].sort(), [0, 1, 2], 'shifts holding none, one and several');
  });
}
