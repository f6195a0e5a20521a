/**
 * updated_at for sync (issue 18 point 1): every search endpoint, and the
 * reservation and site lists, take `updated_at` with the range suffixes and
 * `ordering=updated_at` / `-updated_at` (ties in the default order) — here
 * checked over the API against the records each list returns; and a change
 * to a record (hours logged on a reservation) moves it past a sync point.
 */
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { type DomainEvent, streamOf } from '../src/events/catalog.js';
import { DEMO_KEY, startApp } from './helpers.js';

const app = await startApp({ fixtures: ['demo.ndjson'] });
t.teardown(() => app.close());

interface Stamped {
  id: string;
  created_at: string;
  updated_at?: string;
  shift_start_at?: string;
}

async function all(path: string): Promise<Stamped[]> {
  const out: Stamped[] = [];
  for (let page = 1; ; page++) {
    const { status, body } = await app.get(`${path}${path.includes('?') ? '&' : '?'}limit=100&page=${page}`);
    if (status !== 200) throw new Error(`${path}: ${status} ${JSON.stringify(body)}`);
    out.push(...(body.results as Stamped[]));
    if (body.next === null) return out;
  }
}

const micros = (iso: string) => Date.parse(iso) * 1000 + Number((/\.(\d+)Z$/.exec(iso)?.[1] ?? '').padEnd(6, '0').slice(3, 6));

// Where the list shows no updated_at, the read model's record has it.
const updatedOf = (kind: string, r: Stamped) => (r.updated_at ? micros(r.updated_at) : (app.runtime.model.get(kind as never, r.id) as { updated_at: number } | undefined)!.updated_at);

const lists = [
  { path: '/api/shifts/search/', kind: 'shift', ties: (r: Stamped) => [micros(r.shift_start_at!), micros(r.created_at)] },
  { path: '/api/opportunities/search/', kind: 'opportunity' },
  { path: '/api/profiles/search/', kind: 'profile' },
  { path: '/api/form-submissions/search/', kind: 'formsubmission' },
  { path: '/api/sequences/search/', kind: 'sequence' },
  { path: '/api/user-sequences/search/', kind: 'usersequence' },
  { path: '/api/reservations/', kind: 'reservation' },
  { path: '/api/sites/', kind: 'site' },
];

t.test('ordering=updated_at and -updated_at: by updated_at, ties in the default order', async (t) => {
  for (const { path, kind, ties } of lists) {
    const everything = await all(path);
    const key = (r: Stamped) => [updatedOf(kind, r), ...(ties ? ties(r) : [micros(r.created_at)])];
    const cmp = (a: Stamped, b: Stamped) => {
      const ka = key(a);
      const kb = key(b);
      for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i]) return ka[i]! - kb[i]!;
      return a.id < b.id ? -1 : 1;
    };
    const expected = [...everything].sort(cmp).map((r) => r.id);
    t.same((await all(`${path}?ordering=updated_at`)).map((r) => r.id), expected, `${path} ordering=updated_at`);
    t.same((await all(`${path}?ordering=-updated_at`)).map((r) => r.id), [...expected].reverse(), `${path} ordering=-updated_at`);
    // A sync point in the middle: what changed since, and up to it.
    const middle = everything.map((r) => updatedOf(kind, r)).sort((a, b) => a - b)[everything.length >> 1]!;
    const iso = new Date(Math.floor(middle / 1000)).toISOString();
    const since = await all(`${path}?updated_at.gte=${iso}`);
    t.same(
      since.map((r) => r.id).sort(),
      everything.filter((r) => updatedOf(kind, r) >= micros(iso)).map((r) => r.id).sort(),
      `${path} updated_at.gte`,
    );
    t.equal((await all(`${path}?updated_at.lt=${iso}`)).length + since.length, everything.length, `${path} updated_at.lt is the rest`);
  }
});

t.test('a change moves a record past the sync point', async (t) => {
  const reservations = await all('/api/reservations/?ordering=-updated_at');
  const newest = reservations[0]!;
  const point = new Date(Math.floor(updatedOf('reservation', newest) / 1000) + 1).toISOString();
  t.same(await all(`/api/reservations/?updated_at.gt=${point}`), [], 'nothing changed since');
  const oldest = reservations[reservations.length - 1]!;
  const event: DomainEvent = {
    type: 'HoursLogged',
    data: { institution_id: 'bf802b36-047d-4718-ad5b-ae9ed495b23f', occurred_at: '2026-11-20T10:00:00Z', reservation_id: oldest.id, logged_hours: 2.5 },
  };
  const { position } = await app.runtime.store.append(streamOf(event), [{ id: randomUUID(), type: event.type, data: event.data }]);
  await app.runtime.projector.waitFor(position);
  const changed = await all(`/api/reservations/?updated_at.gt=${point}`);
  t.same(changed.map((r) => r.id), [oldest.id], 'the reservation with hours logged, alone');
  t.equal((changed[0] as unknown as { logged_hours: number }).logged_hours, 2.5);
  t.same((await app.get('/api/reservations/?ordering=sideways')).body, { detail: 'Invalid ordering "sideways": use one of created_at, -created_at, updated_at, -updated_at.' });
  t.equal((await app.get(`/api/reservations/?updated_at.gt=yesterday`)).status, 400);
});
