/**
 * Restart and rebuild give byte-identical answers: the read model loaded
 * from LMDB, and the one replayed from the whole log (on one thread, or
 * with its institutions spread over several), answer every snapshot
 * request exactly as the one built live.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { EmbeddedEventStore } from '../src/eventstore/embedded.js';
import { areas } from './snapshots/cases.js';
import { resolver } from './snapshots/resolve.js';
import { DEMO_KEY, HARBOR_KEY, ROOT, startApp, tempDir, type TestApp } from './helpers.js';

const run = promisify(execFile);

/** `vm-api rebuild <args>` over `dir`, as built; what it printed. */
async function rebuild(dir: string, ...args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, [join(ROOT, 'dist', 'src', 'cli', 'main.js'), 'rebuild', ...args], {
    env: { ...process.env, DATA_DIR: dir },
  });
  return stdout;
}

/** How many events the log in `dir` holds (its positions are 1, 2, …). */
async function eventsInLog(dir: string): Promise<number> {
  const store = EmbeddedEventStore.open(join(dir, 'log'));
  const head = await store.head();
  await store.close();
  return Number(head.commit);
}
const cases = Object.values(areas).flat();
const keys = { riverside: DEMO_KEY, harbor: HARBOR_KEY, none: null } as const;

async function texts(app: TestApp): Promise<string[]> {
  const resolve = await resolver(app);
  const out: string[] = [];
  for (const c of cases) {
    const url = resolve(c.url);
    const res = await app.get(url, keys[c.as ?? 'riverside']);
    out.push(`${res.status} ${res.text}`);
  }
  return out;
}

t.test('restart and rebuild answer byte for byte as before', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.remove);

  const live = await startApp({ dir: tmp.dir, keep: true, fixtures: ['demo.ndjson'] });
  const expected = await texts(live);
  await live.close();

  const restarted = await startApp({ dir: tmp.dir, keep: true });
  t.equal(restarted.runtime.projector.status().eventsApplied, 0, 'loaded from LMDB: nothing replayed');
  t.same(await texts(restarted), expected, 'after a restart');
  await restarted.close();

  const events = await eventsInLog(tmp.dir);
  // The demo log has two institutions: three threads leave one with none.
  for (const [args, says] of [
    [[], ''],
    [['--threads', '2'], ' on 2 threads'],
    [['--threads', '3'], ' on 3 threads'],
    [['--threads', '1'], ''],
  ] as const) {
    t.match(await rebuild(tmp.dir, ...args), new RegExp(`^rebuilt the read model from ${events} events in [\\d.]+ s${says}\n$`), `rebuild ${args.join(' ')}`);
    const rebuilt = await startApp({ dir: tmp.dir, keep: true });
    t.equal(rebuilt.runtime.projector.status().eventsApplied, 0, 'the rebuilt model is loaded, not replayed');
    t.same(await texts(rebuilt), expected, `after a rebuild ${args.join(' ')}`);
    await rebuilt.close();
  }
});

t.test('a server catches up from its checkpoint after events appended while it was down', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.remove);
  const first = await startApp({ dir: tmp.dir, keep: true, fixtures: ['demo.ndjson'] });
  const reference = await startApp({ fixtures: ['demo.ndjson'] });
  t.teardown(() => reference.close());
  await first.close();

  // Cancel a reservation while the server is down: its shift frees a spot.
  const store = EmbeddedEventStore.open(join(tmp.dir, 'log'));
  const events = await store.readAll({ commit: -1n, prepare: -1n }, 100_000);
  const reservation = events.find((e) => e.type === 'ReservationCreated' && !events.some((c) => c.type === 'ReservationCancelled' && (c.data as { reservation_id: string }).reservation_id === (e.data as { reservation_id: string }).reservation_id))!;
  const data = reservation.data as { institution_id: string; reservation_id: string; shift_id: string };
  await store.append(`reservation-${data.reservation_id}`, [
    {
      id: '9d3c1b2a-0f4e-4d5c-8b6a-7e8f9a0b1c2d',
      type: 'ReservationCancelled',
      data: { institution_id: data.institution_id, occurred_at: '2026-11-01T10:00:00Z', reservation_id: data.reservation_id },
    },
  ]);
  await store.close();

  const second = await startApp({ dir: tmp.dir, keep: true });
  t.equal(second.runtime.projector.status().eventsApplied, 1, 'replays only the new event');
  const before = (await reference.get(`/api/shifts/${data.shift_id}/`)).body;
  const after = (await second.get(`/api/shifts/${data.shift_id}/`)).body;
  t.equal(after.spots_reserved, before.spots_reserved - 1);
  t.equal(after.spots_available, Math.max(after.spots - after.spots_reserved, 0));
  await second.close();
});

t.test('an event in the log that names no institution changes nothing, on one thread or several', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.remove);
  const live = await startApp({ dir: tmp.dir, keep: true, fixtures: ['demo.ndjson'] });
  const expected = await texts(live);
  const shift = (await live.get('/api/shifts/?limit=1')).body.results[0];
  // Not through the importer (which would refuse it), as a foreign writer of the log could.
  const { position } = await live.runtime.store.append(`shift-${shift.id}`, [
    { id: '3f2a1b0c-9d8e-4f7a-8b6c-5d4e3f2a1b0c', type: 'ShiftUpdated', data: { occurred_at: '2026-11-01T10:00:00Z', shift_id: shift.id, title: 'Nobody’s' } },
  ]);
  await live.runtime.projector.waitFor(position);
  t.same(await texts(live), expected, 'live');
  await live.close();
  for (const threads of ['1', '2']) {
    t.match(await rebuild(tmp.dir, '--threads', threads), /^rebuilt the read model from \d+ events/);
    const rebuilt = await startApp({ dir: tmp.dir, keep: true });
    t.same(await texts(rebuilt), expected, `rebuilt on ${threads} thread(s)`);
    await rebuilt.close();
  }
});
