/**
 * examples/sync.mjs (issue 18 point 6): run against the demo server on a
 * real port while batches of events of every kind are imported into its
 * log (moves, reservations made, hours logged, cancellations, renames of
 * profiles, categories, opportunities and the institution, statuses,
 * sites), it keeps a copy that, once the imports end and it has read the
 * feed to its end, equals the API's own lists, record for record.
 */
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { mulberry32 } from '../scripts/random.js';
import { importEvents } from '../src/importer/import.js';
import { EsdbStandIn } from './esdb-standin/server.js';
import { DEMO_KEY, startApp } from './helpers.js';

type Get = (path: string) => Promise<any>;
interface Copy {
  cursor: string | null;
  records: Record<string, Record<string, unknown>>;
}
interface SyncExample {
  client(base: string, key: string): Get;
  emptyCopy(): Copy;
  syncOnce(get: Get, copy: Copy, pageSize?: number): Promise<number>;
}

const example = (await import(new URL('../examples/sync.mjs', import.meta.url).href)) as SyncExample;
const RESOURCES = ['shifts', 'opportunities', 'profiles', 'reservations', 'form-submissions', 'sequences', 'user-sequences', 'sites'];
const INSTITUTION = 'bf802b36-047d-4718-ad5b-ae9ed495b23f';

async function listAll(get: Get, resource: string): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (let page = 1; ; page++) {
    const body = await get(`/api/${resource}/?limit=100&page=${page}`);
    for (const record of body.results) out[record.id] = record;
    if (body.next === null) return out;
  }
}

/** Batches of events of every kind, over the demo institution's records as they are now. */
async function eventBatches(get: Get, seed: number, batches: number, size: number): Promise<string[]> {
  const rand = mulberry32(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const shifts = Object.values(await listAll(get, 'shifts')) as Array<{ id: string; opportunity: { id: string; category: { id: string } } }>;
  const profiles = Object.keys(await listAll(get, 'profiles'));
  const reservations = Object.keys(await listAll(get, 'reservations'));
  const userSequences = Object.keys(await listAll(get, 'user-sequences'));
  const submissions = Object.keys(await listAll(get, 'form-submissions'));
  const sequences = Object.keys(await listAll(get, 'sequences'));
  const sites = Object.keys(await listAll(get, 'sites'));
  let minute = 0;
  const at = () => new Date(Date.UTC(2026, 10, 10, 8, minute++)).toISOString().replace('.000Z', 'Z');
  const day = () => `2026-12-${String(1 + Math.floor(rand() * 28)).padStart(2, '0')}T${String(6 + Math.floor(rand() * 12)).padStart(2, '0')}:00:00Z`;
  const made: string[] = [];
  const kinds: Array<() => [string, Record<string, unknown>]> = [
    () => {
      const start = day();
      return ['ShiftUpdated', { shift_id: pick(shifts).id, shift_start_at: start, shift_end_at: start.replace(/T(\d\d)/, (_, h: string) => `T${String(Number(h) + 3).padStart(2, '0')}`) }];
    },
    () => {
      const reservation_id = randomUUID();
      made.push(reservation_id);
      return ['ReservationCreated', { reservation_id, shift_id: pick(shifts).id, user_id: pick(profiles) }];
    },
    () => ['HoursLogged', { reservation_id: pick([...reservations, ...made]), logged_hours: pick([1, 2.5, 4]) }],
    () => ['ProfileUpdated', { profile_id: pick(profiles), first_name: `Renamed ${minute}` }],
    () => ['CategoryUpdated', { category_id: pick(shifts).opportunity.category.id, title: `Category ${minute}` }],
    () => ['OpportunityUpdated', { opportunity_id: pick(shifts).opportunity.id, title: `Opportunity ${minute}` }],
    () => ['UserSequenceStatusChanged', { user_sequence_id: pick(userSequences), status: pick(['Active', 'Paused', 'Finished']) }],
    () => ['FormSubmissionStatusChanged', { submission_id: pick(submissions), submission_status: pick(['Approved', 'New']) }],
    () => ['SequenceUpdated', { sequence_id: pick(sequences), title: `Sequence ${minute}` }],
    () => ['SiteCreated', { site_id: randomUUID(), title: `Site ${minute}` }],
    () => ['UserAssignedToSite', { site_id: pick(sites), user_id: pick(profiles) }],
  ];
  const cancelled = new Set<string>();
  const out: string[] = [];
  for (let b = 0; b < batches; b++) {
    const lines: string[] = [];
    for (let i = 0; i < size; i++) {
      let [type, data] = pick(kinds)();
      if (type === 'HoursLogged' && cancelled.has(data.reservation_id as string)) continue;
      if (rand() < 0.05) [type, data] = ['ReservationCancelled', { reservation_id: pick(reservations.filter((r) => !cancelled.has(r))) }];
      if (type === 'ReservationCancelled') cancelled.add(data.reservation_id as string);
      lines.push(JSON.stringify({ type, id: randomUUID(), data: { institution_id: INSTITUTION, occurred_at: at(), ...data } }));
    }
    if (b === Math.floor(batches / 2)) {
      lines.push(JSON.stringify({ type: 'InstitutionUpdated', id: randomUUID(), data: { institution_id: INSTITUTION, occurred_at: at(), share_base_url: 'https://moved.example' } }));
    }
    // Last, as nothing refers to a removed shift after it.
    if (b === batches - 1) lines.push(JSON.stringify({ type: 'ShiftRemoved', id: randomUUID(), data: { institution_id: INSTITUTION, occurred_at: at(), shift_id: pick(shifts).id } }));
    out.push(lines.join('\n') + '\n');
  }
  return out;
}

for (const store of ['embedded log', 'EventStoreDB stand-in'] as const) {
  t.test(`the example's copy equals the lists after imports made while it synced (${store})`, async (t) => {
    const esdb = store === 'EventStoreDB stand-in' ? await EsdbStandIn.start() : undefined;
    t.teardown(() => esdb?.stop());
    const app = await startApp({ fixtures: ['demo.ndjson'], eventstoreUrl: esdb?.connectionString });
    t.teardown(() => app.close());
    const get = example.client(await app.server.listen({ port: 0, host: '127.0.0.1' }), DEMO_KEY);
    const batches = await eventBatches(get, 18, 12, 25);
    const copy = example.emptyCopy();
    // From nothing: the whole feed.
    const first = await example.syncOnce(get, copy);
    t.ok(first > 300, `${first} changes read from the beginning`);
    // The importer goes on once a pass has ended after its batch; the next batch is imported while the next pass reads.
    let importing = true;
    let passEnded: Array<() => void> = [];
    const nextPass = () => new Promise<void>((resolve) => passEnded.push(resolve));
    const importer = (async () => {
      for (const [n, text] of batches.entries()) {
        await importEvents(app.runtime.store, `batch-${n}.ndjson`, text);
        await nextPass();
      }
      importing = false;
    })();
    let passes = 0;
    let read = 0;
    // Small pages: many of them in each pass.
    while (importing) {
      read += await example.syncOnce(get, copy, 20);
      passes++;
      const ended = passEnded;
      passEnded = [];
      for (const resolve of ended) resolve();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await importer;
    await app.runtime.projector.waitFor(await app.runtime.store.head());
    read += await example.syncOnce(get, copy, 20);
    t.ok(passes >= batches.length, `${passes} passes while importing, ${read} changes read`);
    for (const resource of RESOURCES) {
      const listed = await listAll(get, resource);
      t.ok(Object.keys(listed).length > 0, `${resource}: ${Object.keys(listed).length} records`);
      t.same(copy.records[resource], listed, `${resource}: the copy is the list`);
    }
    t.equal(await example.syncOnce(get, copy), 0, 'nothing more to read');
  });
}
