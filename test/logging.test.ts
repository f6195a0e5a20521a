/**
 * Logs as an operator reads them: JSON lines; a line about a request names
 * its request id, and, once authenticated, the key's id and the institution —
 * never the key, whose header is redacted; `serve` says where it listens in a
 * log line; SIGTERM stops accepting, finishes the requests in flight, closes
 * the log and the read model, says so, and exits 0.
 */
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, constants, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pino } from 'pino';
import t from 'tap';
import { logDestination, logDrops } from '../src/logger.js';
import { DEMO_KEY, ROOT, startApp, tempDir, until } from './helpers.js';

const RIVERSIDE = 'bf802b36-047d-4718-ad5b-ae9ed495b23f';

t.test('request lines: one a request, with its id, what it was, how it went, and whose it was, never the key', async (t) => {
  const lines: Array<Record<string, any>> = [];
  const logger = pino(
    { level: 'info', redact: { paths: ['req.headers["api-key"]'], censor: '[redacted]' }, serializers: { req: (req) => ({ method: req.method, url: req.url, headers: req.headers }) } },
    { write: (text: string) => void lines.push(JSON.parse(text)) },
  );
  const app = await startApp({ fixtures: ['demo.ndjson'], logger });
  t.teardown(() => app.close());
  await app.get('/api/shifts/?limit=1');
  await app.get('/healthz');
  await app.get('/api/shifts/', 'vm_not_a_key');
  const about = lines.filter((l) => l.reqId !== undefined);
  t.equal(about.length, 3, 'one line a request, at info');
  const [search, health, refused] = about;
  t.match(search, { msg: 'request completed', reqId: /^req-/, req: { method: 'GET', url: '/api/shifts/?limit=1' }, res: { statusCode: 200 }, institution: RIVERSIDE, key_id: /^[0-9a-f-]{36}$/ });
  t.type(search!.responseTime, 'number', 'its time');
  t.equal(search!.req.headers['api-key'], '[redacted]', 'the key header redacted');
  t.match(health, { msg: 'request completed', req: { url: '/healthz' }, res: { statusCode: 200 } });
  t.notOk('key_id' in health! || 'institution' in health!, 'no key, no key id');
  t.match(refused, { msg: 'request completed', res: { statusCode: 401 } });
  t.notOk('key_id' in refused!, 'a key that is none has no id');
  t.notOk(JSON.stringify(lines).includes(DEMO_KEY) || JSON.stringify(lines).includes('vm_not_a_key'), 'no key is in any line');
});

t.test('at debug, a line when a request comes in too', async (t) => {
  const lines: Array<Record<string, any>> = [];
  const logger = pino({ level: 'debug' }, { write: (text: string) => void lines.push(JSON.parse(text)) });
  const app = await startApp({ fixtures: ['demo.ndjson'], logger });
  t.teardown(() => app.close());
  await app.get('/api/shifts/?limit=1');
  const about = lines.filter((l) => l.reqId !== undefined);
  t.same(about.map((l) => l.msg), ['incoming request', 'request completed']);
  t.equal(about[0]!.reqId, about[1]!.reqId, 'the same request id');
});

t.test('serve: a log line with the URL; SIGTERM finishes what is in flight and exits 0, saying so', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.remove);
  const child = spawn(process.execPath, [join(ROOT, 'dist', 'src', 'cli', 'main.js'), 'serve', '--demo'], {
    // (At debug: the line a request's arrival writes says when the server has it.)
    env: { ...process.env, DATA_DIR: tmp.dir, PORT: '0', LOG_LEVEL: 'debug' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const lines: string[] = [];
  const rl = createInterface({ input: child.stdout! });
  const url = await new Promise<string>((resolve) =>
    rl.on('line', (line) => {
      lines.push(line);
      const m = /"url":"(http:\/\/[^"]+)"/.exec(line);
      if (m) resolve(m[1]!);
    }),
  );
  // Wait for the demo banner (the read model is ready by then): for the human, on stderr, stdout not being a terminal.
  const banner = () => stderr.includes('\nDemo API key: ') || lines.some((l) => l.startsWith('Demo API key: '));
  while (!banner()) await new Promise((resolve) => setTimeout(resolve, 20));
  t.ok(stderr.includes('\nDemo API key: '), 'the demo banner on stderr');
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
  t.same(lines.filter((l) => !l.startsWith('{')), [], 'stdout (not a terminal): JSON lines only');
  const said = lines.map((l) => JSON.parse(l).msg as string);
  t.ok(said.includes('Volunteer Management API listening'));
  t.ok(said.includes('shutting down: no new connections; finishing the requests in flight'));
  t.ok(said.includes('stopped'));
});

t.test('a stdout that takes no more costs at most the log buffer: lines past it are dropped and counted', async (t) => {
  const temp = tempDir();
  t.teardown(temp.remove);
  // A pipe nobody reads (a stalled log shipper): it fills at 64 KB, then every write would wait.
  const fifo = join(temp.dir, 'stdout');
  execFileSync('mkfifo', [fifo]);
  const fd = openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK);
  const buffer = 256 * 1024;
  const destination = logDestination(fd, buffer);
  const logger = pino({ level: 'info' }, destination);
  const before = logDrops.count;
  const line = 'x'.repeat(1000);
  for (let i = 0; i < 5000; i++) logger.info({ i, line }, 'a line');
  const dropped = logDrops.count - before;
  // ~5.1 MB logged: the pipe takes 64 KB, the buffer 256 KB, the rest (~4,700 lines) is dropped.
  t.ok(dropped >= 4500, `${dropped} of 5,000 lines dropped, not held`);
  t.ok(dropped < 5000, 'what the pipe and the buffer take is kept');

  // The reader comes back: what was kept is written out in whole lines, and logging goes on.
  const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
  let text = '';
  const chunk = Buffer.alloc(1 << 16);
  await until(() => {
    for (;;) {
      let n = 0;
      try {
        n = readSync(reader, chunk);
      } catch {
        break; // EAGAIN: nothing more for now
      }
      if (n === 0) break;
      text += chunk.toString('utf8', 0, n);
    }
    if (!text.includes('"msg":"after"')) logger.info('after');
    return text.includes('"msg":"after"') ? true : undefined;
  });
  const lines = text.trim().split('\n');
  t.ok(lines.every((l) => JSON.parse(l).msg !== undefined), `${lines.length} whole JSON lines`);
  await new Promise((resolve) => {
    destination.once('close', resolve);
    destination.end();
  });
  closeSync(reader);
});
