/**
 * The vm-api command line with EVENTSTORE_URL pointing at the EventStoreDB
 * stand-in: import (and its idempotency), rebuild, and a serving process
 * that answers reads, takes sites writes and shows another process's
 * import within a second — as with the embedded log.
 */
import { execFile, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import t from 'tap';
import { EsdbStandIn } from './esdb-standin/server.js';
import { DEMO_KEY, fixturePath, readFixture, ROOT, tempDir, until } from './helpers.js';

const run = promisify(execFile);
const CLI = join(ROOT, 'dist', 'src', 'cli', 'main.js');

t.test('import, rebuild and serve on EventStoreDB', async (t) => {
  const server = await EsdbStandIn.start();
  t.teardown(() => server.stop());
  const tmp = tempDir();
  t.teardown(tmp.remove);
  const env = { ...process.env, DATA_DIR: tmp.dir, EVENTSTORE_URL: server.connectionString, LOG_LEVEL: 'warn' };
  const vmApi = (...args: string[]) => run(process.execPath, [CLI, ...args], { env });
  const lines = readFixture('demo.ndjson').trim().split('\n').length;

  t.match((await vmApi('import', fixturePath('demo.ndjson'))).stdout, new RegExp(`${lines} events appended, 0 already in the log`));
  t.match((await vmApi('import', fixturePath('demo.ndjson'))).stdout, new RegExp(`0 events appended, ${lines} already in the log`), 'a re-import appends nothing');
  // On two threads (institutions spread by a hash of their ids: positions of EventStoreDB cannot be sampled), then on one.
  t.match((await vmApi('rebuild', '--threads', '2')).stdout, new RegExp(`rebuilt the read model from ${lines} events in [\\d.]+ s on 2 threads`));
  t.match((await vmApi('rebuild')).stdout, new RegExp(`rebuilt the read model from ${lines} events in [\\d.]+ s\n`));

  const serving = spawn(process.execPath, [CLI, 'serve'], { env: { ...env, PORT: '0', LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'inherit'] });
  t.teardown(() => serving.kill('SIGTERM'));
  const port = await new Promise<number>((resolve, reject) => {
    const rl = createInterface({ input: serving.stdout });
    rl.on('line', (line) => {
      const m = /"url":"http:\/\/127\.0\.0\.1:(\d+)"/.exec(line);
      if (m) resolve(Number(m[1]));
    });
    serving.once('exit', (code) => reject(new Error(`serve exited with ${code}`)));
  });
  const base = `http://127.0.0.1:${port}`;
  const get = async (path: string) => (await fetch(base + path, { headers: { 'api-key': DEMO_KEY } })).json() as Promise<any>;
  // It listens at once and makes its read model ready meanwhile: /healthz says when.
  await until(async () => ((await (await fetch(`${base}/healthz`)).json()) as { warm_up: unknown }).warm_up === null || undefined, 20_000);
  t.equal((await get('/api/shifts/?limit=1')).count, 149, 'the served read model holds the imported log');

  const created = await fetch(`${base}/api/sites/bulk-create/`, {
    method: 'POST',
    headers: { 'api-key': DEMO_KEY, 'content-type': 'application/json' },
    body: JSON.stringify({ sites: [{ title: 'On EventStoreDB' }] }),
  });
  t.equal(created.status, 201);
  const site = ((await created.json()) as { results: Array<{ id: string }> }).results[0]!;
  t.equal((await get(`/api/sites/${site.id}/`)).title, 'On EventStoreDB', 'read-your-writes through EventStoreDB');

  // Another process imports while this one serves.
  const institution = JSON.parse(readFixture('demo.ndjson').split('\n')[0]!).data.institution_id as string;
  const file = join(tmp.dir, 'more.ndjson');
  writeFileSync(file, JSON.stringify({ type: 'SiteCreated', data: { institution_id: institution, occurred_at: '2026-11-02T10:00:00Z', site_id: '0b7e3c1a-5d2f-4a6b-8c9d-0e1f2a3b4c5d', title: 'Imported elsewhere' } }) + '\n');
  await vmApi('import', file);
  const importedAt = Date.now();
  let seenAfter = -1;
  while (Date.now() - importedAt < 2000) {
    if ((await get('/api/sites/?title=imported+elsewhere')).count === 1) {
      seenAfter = Date.now() - importedAt;
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  t.ok(seenAfter >= 0 && seenAfter <= 1000, `the other process's import is served after ${seenAfter} ms`);
});
