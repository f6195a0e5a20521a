/**
 * Webhooks as `vm-api serve` runs them, settings from the environment:
 * the deliverer starts with the server, delivers what the API and another
 * process's import append, warns when secrets are kept in plaintext, logs
 * neither secrets nor keys, and on SIGTERM stops at once, an attempt in
 * flight included. Bad WEBHOOK_* values stop the process naming them.
 */
import { execFile, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import t from 'tap';
import { ConfigError, loadConfig } from '../src/config.js';
import { webhookSettings } from '../src/webhooks/settings.js';
import { DEMO_KEY, readFixture, ROOT, tempDir, until } from './helpers.js';
import { receiver, verified } from './webhooks-receiver.js';

const run = promisify(execFile);
const CLI = join(ROOT, 'dist', 'src', 'cli', 'main.js');

t.test('the WEBHOOK_* settings', async (t) => {
  t.same(webhookSettings(loadConfig({})), {
    delivery: true,
    allowHttp: false,
    allowPrivateNetworks: false,
    retryBaseMs: 5000,
    maxAttempts: 8,
    timeoutMs: 10_000,
    secretKey: undefined,
  });
  const key = Buffer.alloc(32, 7);
  const set = webhookSettings(
    loadConfig({ WEBHOOK_DELIVERY: 'false', WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_MAX_ATTEMPTS: '3', WEBHOOK_SECRET_KEY: key.toString('base64') }),
  );
  t.match(set, { delivery: false, allowHttp: true, maxAttempts: 3 });
  t.same(set.secretKey, key, 'a base64 key');
  t.same(webhookSettings(loadConfig({ WEBHOOK_SECRET_KEY: key.toString('hex') })).secretKey, key, 'a hex key');
  for (const [name, value] of [['WEBHOOK_DELIVERY', 'yes'], ['WEBHOOK_MAX_ATTEMPTS', '0'], ['WEBHOOK_RETRY_BASE_MS', 'soon'], ['WEBHOOK_SECRET_KEY', 'short']]) {
    t.throws(() => loadConfig({ [name!]: value }), new ConfigError(), `${name}=${value}`);
    t.throws(() => loadConfig({ [name!]: value }), { message: new RegExp(`^invalid configuration: ${name}: `) });
  }
});

t.test('serve delivers, and stops at once on SIGTERM', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.remove);
  const hook = await receiver();
  t.teardown(() => hook.close());
  const env = {
    ...process.env,
    DATA_DIR: tmp.dir,
    PORT: '0',
    LOG_LEVEL: 'info',
    WEBHOOK_ALLOW_HTTP: 'true',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_RETRY_BASE_MS: '20',
    WEBHOOK_TIMEOUT_MS: '60000',
  };
  const serving = spawn(process.execPath, [CLI, 'serve', '--demo'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => serving.kill('SIGKILL'));
  const output: string[] = [];
  const exited = new Promise<number | null>((resolve) => serving.once('exit', (code) => resolve(code)));
  const port = await new Promise<number>((resolve, reject) => {
    const rl = createInterface({ input: serving.stdout });
    rl.on('line', (line) => {
      output.push(line);
      const m = /"url":"http:\/\/127\.0\.0\.1:(\d+)"/.exec(line);
      if (m) resolve(Number(m[1]));
    });
    serving.stderr.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    void exited.then((code) => reject(new Error(`serve exited with ${code}`)));
  });
  t.ok(output.some((line) => /WEBHOOK_SECRET_KEY is not set: webhook secrets made now are stored in the log in plaintext/.test(line)), 'it warns');
  const base = `http://127.0.0.1:${port}`;
  const api = (path: string, init: RequestInit = {}) =>
    fetch(base + path, { ...init, headers: { 'api-key': DEMO_KEY, 'content-type': 'application/json', ...init.headers } });
  await until(async () => ((await api('/api/webhooks/')).status === 200 ? true : undefined), 20_000);

  const created = await api('/api/webhooks/', { method: 'POST', body: JSON.stringify({ url: hook.url, event_types: ['SiteCreated'] }) });
  t.equal(created.status, 201);
  const { secret } = (await created.json()) as { secret: string };
  t.equal((await api('/api/sites/bulk-create/', { method: 'POST', body: JSON.stringify({ sites: [{ title: 'Served' }] }) })).status, 201);
  await hook.count(1, 10_000);
  t.equal(verified(secret, hook.received[0]!).data.title, 'Served');

  // Another process appends to the log: delivered too.
  const institution = JSON.parse(readFixture('demo.ndjson').split('\n')[0]!).data.institution_id as string;
  const file = join(tmp.dir, 'more.ndjson');
  writeFileSync(file, JSON.stringify({ type: 'SiteCreated', data: { institution_id: institution, occurred_at: '2026-11-02T10:00:00Z', site_id: '5c2d1e0f-3a4b-4c5d-8e6f-7a8b9c0d1e2f', title: 'Imported' } }) + '\n');
  await run(process.execPath, [CLI, 'import', file], { env: { ...env, LOG_LEVEL: 'warn' } });
  await hook.count(2, 10_000);
  t.equal(verified(secret, hook.received[1]!).data.title, 'Imported');

  // An attempt in flight (the receiver never answers; the timeout is a minute): SIGTERM stops at once.
  hook.behave('hang');
  t.equal((await api('/api/sites/bulk-create/', { method: 'POST', body: JSON.stringify({ sites: [{ title: 'Hanging' }] }) })).status, 201);
  await hook.count(3, 10_000);
  t.equal(verified(secret, hook.received[2]!).data.title, 'Hanging');
  const stopping = Date.now();
  serving.kill('SIGTERM');
  t.equal(await exited, 0, 'a clean exit');
  t.ok(Date.now() - stopping < 5000, `stopped in ${Date.now() - stopping} ms, the attempt in flight aborted`);
  // The log's lines (serve --demo also prints the demo key for the human who started it, not as a log line).
  const log = output.filter((line) => line.startsWith('{')).join('\n');
  t.match(log, /"msg":"Volunteer Management API listening"/);
  t.notOk(log.includes(secret.slice(6)), 'the secret is never logged');
  t.notOk(log.includes(DEMO_KEY), 'nor the API key');
});
