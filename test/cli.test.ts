/**
 * The vm-api command line, run as built (dist/): import validation and
 * idempotency, keys, rebuild, and an import by another process showing up
 * in a running server within a second.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { EmbeddedEventStore } from '../src/eventstore/embedded.js';
import { readFixture, ROOT, startApp, tempDir } from './helpers.js';

const run = promisify(execFile);
const CLI = join(ROOT, 'dist', 'src', 'cli', 'main.js');

async function vmApi(dataDir: string, ...args: string[]) {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], { env: { ...process.env, DATA_DIR: dataDir } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

async function logSize(dataDir: string): Promise<bigint> {
  const store = EmbeddedEventStore.open(join(dataDir, 'log'));
  const head = await store.head();
  await store.close();
  return head.commit + 1n;
}

const demo = readFixture('demo.ndjson').trim().split('\n');
const institution = JSON.parse(demo[0]!).data.institution_id as string;
const opportunity = demo.map((l) => JSON.parse(l)).find((e) => e.type === 'OpportunityCreated').data.opportunity_id as string;

const shiftLine = (overrides: Record<string, unknown> = {}) =>
  JSON.stringify({
    type: 'ShiftCreated',
    data: {
      institution_id: institution,
      occurred_at: '2026-09-01T08:00:00Z',
      shift_id: '5b0c7a52-8f39-4c8e-9d0b-2a6f1e3c4d5e',
      opportunity_id: opportunity,
      title: 'Extra shift',
      description: null,
      shift_start_at: '2026-09-20T09:00:00Z',
      shift_end_at: '2026-09-20T12:00:00Z',
      spots: 3,
      ...overrides,
    },
  });

t.test('import: the whole file is validated; one bad line and nothing is appended', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.remove);
  t.equal((await vmApi(tmp.dir, 'import', join(ROOT, 'fixtures', 'demo.ndjson'))).code, 0);
  const before = await logSize(tmp.dir);
  const file = join(tmp.dir, 'bad.ndjson');
  writeFileSync(
    file,
    [
      shiftLine(),
      '{"type": "ShiftCreated", "data": ',
      JSON.stringify({ type: 'ShiftExploded', data: {} }),
      shiftLine({ shift_id: 'c1f0e3a4-1111-4222-8333-444455556666', spots: -1 }),
      shiftLine({ shift_id: 'c1f0e3a4-1111-4222-8333-444455556667', colour: 'red' }),
      shiftLine({ shift_id: 'c1f0e3a4-1111-4222-8333-444455556668', shift_start_at: '2026-09-20 09:00' }),
      shiftLine({ shift_id: 'c1f0e3a4-1111-4222-8333-444455556669', opportunity_id: '0d7c9a1e-2b3f-4c5d-8e6f-708192a3b4c5' }),
      shiftLine({ shift_id: 'c1f0e3a4-1111-4222-8333-44445555666a', shift_end_at: '2026-09-20T08:00:00Z' }),
    ].join('\n'),
  );
  const result = await vmApi(tmp.dir, 'import', file);
  t.equal(result.code, 1);
  t.match(result.stderr, /nothing was imported/);
  t.match(result.stderr, /bad\.ndjson:2: not valid JSON/);
  t.match(result.stderr, /bad\.ndjson:3: type: unknown event type "ShiftExploded"/);
  t.match(result.stderr, /bad\.ndjson:4: data\.spots: /);
  t.match(result.stderr, /bad\.ndjson:5: data: Unrecognized key: "colour"/);
  t.match(result.stderr, /bad\.ndjson:6: data\.shift_start_at: must be a UTC timestamp/);
  t.equal(await logSize(tmp.dir), before, 'schema errors: nothing appended');

  writeFileSync(file, [shiftLine(), shiftLine({ shift_id: 'c1f0e3a4-1111-4222-8333-444455556669', opportunity_id: '0d7c9a1e-2b3f-4c5d-8e6f-708192a3b4c5' }), shiftLine({ shift_id: 'c1f0e3a4-1111-4222-8333-44445555666a', shift_end_at: '2026-09-20T08:00:00Z' })].join('\n'));
  const refs = await vmApi(tmp.dir, 'import', file);
  t.equal(refs.code, 1);
  t.match(refs.stderr, /bad\.ndjson:2: data\.opportunity_id: unknown opportunity 0d7c9a1e-2b3f-4c5d-8e6f-708192a3b4c5/);
  t.match(refs.stderr, /bad\.ndjson:3: data\.shift_end_at: must not be before shift_start_at/);
  t.equal(await logSize(tmp.dir), before, 'reference errors: nothing appended');

  const harborLine = readFixture('demo.ndjson')
    .split('\n')
    .map((l) => (l ? JSON.parse(l) : null))
    .find((e) => e?.type === 'InstitutionRegistered' && e.data.institution_id !== institution);
  writeFileSync(file, shiftLine({ institution_id: harborLine.data.institution_id }));
  const cross = await vmApi(tmp.dir, 'import', file);
  t.match(cross.stderr, /data\.opportunity_id: unknown opportunity .* in institution/, 'a reference into another institution is refused');
  t.same(readdirSync(tmp.dir).filter((name) => name.endsWith('.spool')), [], 'no spool left behind by a refused import');
});

t.test('import: importing a file again appends nothing', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.remove);
  const first = await vmApi(tmp.dir, 'import', join(ROOT, 'fixtures', 'demo.ndjson'));
  t.match(first.stdout, new RegExp(`${demo.length} events appended, 0 already in the log`));
  t.ok(existsSync(join(tmp.dir, 'import-summary')), 'a summary of the log left for the next import (import-summary.test.ts)');
  const size = await logSize(tmp.dir);
  const second = await vmApi(tmp.dir, 'import', join(ROOT, 'fixtures', 'demo.ndjson'));
  t.equal(second.code, 0);
  t.match(second.stdout, new RegExp(`0 events appended, ${demo.length} already in the log`));
  t.equal(await logSize(tmp.dir), size);
  t.same(readdirSync(tmp.dir).filter((name) => name.endsWith('.spool')), [], 'no spool left behind');

  const file = join(tmp.dir, 'no-ids.ndjson');
  writeFileSync(file, shiftLine() + '\n');
  t.match((await vmApi(tmp.dir, 'import', file)).stdout, /1 events appended/);
  t.match((await vmApi(tmp.dir, 'import', file)).stdout, /0 events appended, 1 already/, 'lines without id get an id derived from their text');
});

t.test('an import by another process shows in a running server within 1 s', async (t) => {
  const app = await startApp({ fixtures: ['demo.ndjson'] });
  t.teardown(() => app.close());
  const file = join(app.dir, 'more.ndjson');
  writeFileSync(file, shiftLine() + '\n');
  const before = (await app.get('/api/shifts/')).body.count;
  const result = await vmApi(app.dir, 'import', file);
  t.equal(result.code, 0, result.stderr);
  const imported = performance.now();
  let seenAfter = Infinity;
  while (performance.now() - imported < 3000) {
    if ((await app.get('/api/shifts/')).body.count === before + 1) {
      seenAfter = performance.now() - imported;
      break;
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  t.ok(seenAfter < 1000, `seen after ${Math.round(seenAfter)} ms`);
  t.equal((await app.get('/api/shifts/5b0c7a52-8f39-4c8e-9d0b-2a6f1e3c4d5e/')).status, 200);
});

t.test('keys: issue prints a working key once; revoke stops it', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.remove);
  await vmApi(tmp.dir, 'import', join(ROOT, 'fixtures', 'demo.ndjson'));
  const issued = await vmApi(tmp.dir, 'keys', 'issue', '--institution', institution, '--label', 'reporting');
  t.equal(issued.code, 0, issued.stderr);
  const key = /api key: (\S+)/.exec(issued.stdout)?.[1];
  const keyId = /key_id: (\S+)/.exec(issued.stdout)?.[1];
  t.ok(key && keyId);

  const app = await startApp({ dir: tmp.dir, keep: true });
  t.equal((await app.get('/api/shifts/', key)).status, 200, 'the new key works');
  await app.close();

  const revoked = await vmApi(tmp.dir, 'keys', 'revoke', keyId!);
  t.equal(revoked.code, 0, revoked.stderr);
  const again = await startApp({ dir: tmp.dir, keep: true });
  t.equal((await again.get('/api/shifts/', key)).status, 401, 'a revoked key is refused');
  await again.close();

  const unknown = await vmApi(tmp.dir, 'keys', 'issue', '--institution', '0d7c9a1e-2b3f-4c5d-8e6f-708192a3b4c5');
  t.equal(unknown.code, 1);
  t.match(unknown.stderr, /unknown institution/);
  t.equal((await vmApi(tmp.dir, 'keys', 'issue')).code, 2, 'usage error');
});

t.test('configuration errors name the variable', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.remove);
  const { code, stderr } = await run(process.execPath, [CLI, 'rebuild'], {
    env: { ...process.env, DATA_DIR: tmp.dir, PORT: 'eighty' },
  }).then(
    () => ({ code: 0, stderr: '' }),
    (e: { code: number; stderr: string }) => e,
  );
  t.equal(code, 1);
  t.match(stderr, /PORT/);
});

t.test('rebuild --threads takes a whole number from 1 to 64', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.remove);
  for (const bad of ['0', '65', '1.5', 'two', '-1', '']) {
    const result = await vmApi(tmp.dir, 'rebuild', `--threads=${bad}`);
    t.equal(result.code, 2, `--threads=${bad}: usage error`);
    t.match(result.stderr, /--threads must be a whole number from 1 to 64/);
  }
  const unknown = await vmApi(tmp.dir, 'rebuild', '--fast');
  t.equal(unknown.code, 2, 'an unknown option is a usage error');
  t.match(unknown.stderr, /Unknown option '--fast'[\s\S]*usage: vm-api/);
  const none = await vmApi(join(tmp.dir, 'nothing'), 'rebuild');
  t.equal(none.code, 1, 'no log: nothing to rebuild');
  t.match(none.stderr, /^no event log in .*nothing: nothing to rebuild/);
  t.notOk(existsSync(join(tmp.dir, 'nothing')), 'and no DATA_DIR made');
  await (await EmbeddedEventStore.open(join(tmp.dir, 'log'))).close();
  const empty = await vmApi(tmp.dir, 'rebuild', '--threads', '2');
  t.equal(empty.code, 0, 'an empty log rebuilds on two threads too');
  t.match(empty.stdout, /rebuilt the read model from 0 events in [\d.]+ s on 2 threads/);
});
