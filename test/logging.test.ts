/**
 * Logs as an operator reads them: JSON lines; a line about a request names
 * its request id, and, once authenticated, the key's id and the institution —
 * never the key, whose header is redacted; `serve` says where it listens in a
 * log line; SIGTERM stops accepting, finishes the requests in flight, closes
 * the log and the read model, says so, and exits 0.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pino } from 'pino';
import t from 'tap';
import { DEMO_KEY, ROOT, startApp, tempDir } from './helpers.js';

const RIVERSIDE = 'bf802b36-047d-4718-ad5b-ae9ed495b23f';

t.test('request lines: request id, key id and institution, never the key', async (t) => {
  const lines: Array<Record<string, any>> = [];
  const logger = pino(
    { level: 'info', redact: { paths: ['req.headers["api-key"]'], censor: '[redacted]' }, serializers: { req: (req) => ({ method: req.method, url: req.url, headers: req.headers }) } },
    { write: (text: string) => void lines.push(JSON.parse(text)) },
  );
  const app = await startApp({ fixtures: ['demo.ndjson'], logger });
  t.teardown(() => app.close());
  await app.get('/api/shifts/?limit=1');
  const about = lines.filter((l) => l.reqId !== undefined);
  t.ok(about.length >= 2, 'incoming and completed');
  const completed = about.find((l) => l.msg === 'request completed')!;
  t.match(completed, { reqId: /^req-/, institution: RIVERSIDE, key_id: /^[0-9a-f-]{36}$/ });
  t.notOk(JSON.stringify(lines).includes(DEMO_KEY), 'the key is in no line');
});

t.test('serve: a log line with the URL; SIGTERM finishes what is in flight and exits 0, saying so', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.remove);
  const child = spawn(process.execPath, [join(ROOT, 'dist', 'src', 'cli', 'main.js'), 'serve', '--demo'], {
    env: { ...process.env, DATA_DIR: tmp.dir, PORT: '0', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  const rl = createInterface({ input: child.stdout! });
  const url = await new Promise<string>((resolve) =>
    rl.on('line', (line) => {
      lines.push(line);
      const m = /"url":"(http:\/\/[^"]+)"/.exec(line);
      if (m) resolve(m[1]!);
    }),
  );
  // Wait for the demo banner (the read model is ready by then).
  while (!lines.some((l) => l.startsWith('Demo API key:'))) await new Promise((resolve) => setTimeout(resolve, 20));
  // A request in flight when the signal comes is still answered.
  const inFlight = fetch(`${url}/api/sites/bulk-create/`, {
    method: 'POST',
    headers: { 'api-key': DEMO_KEY, 'content-type': 'application/json' },
    body: JSON.stringify({ sites: [{ title: 'Made while stopping' }] }),
  });
  // Signalled once the server has the request (a request still on its way when the server closes is answered 503).
  while (!lines.some((l) => l.includes('incoming request') && l.includes('bulk-create'))) await new Promise((resolve) => setTimeout(resolve, 1));
  child.kill('SIGTERM');
  const [response, code] = await Promise.all([inFlight, new Promise<number | null>((resolve) => child.once('exit', resolve))]);
  t.equal(response.status, 201, 'the request in flight was answered');
  t.equal(code, 0, 'exit 0');
  const said = lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l).msg as string);
  t.ok(said.includes('Volunteer Management API listening'));
  t.ok(said.includes('shutting down: no new connections; finishing the requests in flight'));
  t.ok(said.includes('stopped'));
});
