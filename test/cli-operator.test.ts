/**
 * The command line as a new operator meets it (run as built): help and
 * version; one line and exit 1 for every mistake (a port in use, a file
 * missing or a directory, an unknown key or institution), never a stack
 * trace, and nothing made on disk for a command that failed; keys and
 * institutions listed; a key revoked once, and a pasted secret never echoed.
 * An import runs at a lower CPU priority than the server it shares a machine with.
 * And the HTTP niceties of the same issue: 405 with Allow, a replayed answer
 * marked Idempotent-Replayed, an Idempotency-Key error naming the header.
 */
import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t, { type Test } from 'tap';
import { EmbeddedEventStore } from '../src/eventstore/embedded.js';
import { DEMO_KEY, ROOT, startApp, tempDir } from './helpers.js';

const run = promisify(execFile);
const CLI = join(ROOT, 'dist', 'src', 'cli', 'main.js');
const RIVERSIDE = 'bf802b36-047d-4718-ad5b-ae9ed495b23f';

async function vmApi(dir: string, args: string[], env: Record<string, string> = {}) {
  return run(process.execPath, [CLI, ...args], { env: { ...process.env, DATA_DIR: dir, ...env }, timeout: 20_000 }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => e,
  );
}

const noStack = (t: Test, text: string, what: string) => t.notMatch(text, /\n\s+at /, `${what}: no stack trace`);

t.test('help and version', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.remove);
  for (const args of [['--help'], ['-h'], ['help'], ['serve', '--help'], ['import', '--help'], ['keys', 'revoke', '-h']]) {
    const result = await vmApi(join(tmp.dir, 'unused'), args);
    t.equal(result.code, 0, `${args.join(' ')}: exit 0`);
    t.match(result.stdout, /^usage: vm-api <command>/, `${args.join(' ')}: the usage`);
  }
  const version = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version as string;
  t.same(await vmApi(tmp.dir, ['--version']), { code: 0, stdout: `${version}\n`, stderr: '' });
  t.notOk(existsSync(join(tmp.dir, 'unused')), 'no DATA_DIR made');
  const unknown = await vmApi(tmp.dir, ['frobnicate']);
  t.equal(unknown.code, 2, 'an unknown command is a usage error');
});

t.test("the bin runs node as its first line says, with one thread of V8's concurrent marking (node's command line is the only place for it); npm start runs the server so too", async (t) => {
  const shebang = readFileSync(CLI, 'utf8').split('\n', 1)[0]!;
  const [, interpreter, line] = /^#!(\S+) (.*)$/.exec(shebang) ?? [];
  t.equal(interpreter, '/usr/bin/env');
  t.match(line, /^-S node (.* )?--concurrent-marking-max-worker-num=1( |$)/);
  // As the kernel runs a script: its interpreter, the rest of the line as one argument, the script, its arguments.
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string; scripts: { start: string } };
  const ran = await run(interpreter!, [line!, CLI, '--version'], { timeout: 20_000 });
  t.equal(ran.stdout, `${pkg.version}\n`, 'node takes the flags: the command runs');
  const start = pkg.scripts.start;
  t.ok(start.includes(`node ${line!.slice('-S node '.length)} dist/src/cli/main.js serve`), `npm start: ${start}`);
});

t.test('one line and exit 1 for each mistake, nothing made on disk', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.remove);
  const data = join(tmp.dir, 'data');
  mkdirSync(join(tmp.dir, 'a-directory'));
  for (const [file, says] of [
    [join(tmp.dir, 'missing.ndjson'), /^no such file: .*missing\.ndjson\n$/],
    [join(tmp.dir, 'a-directory'), /^.*a-directory is a directory, not an NDJSON file\n$/],
  ] as const) {
    const result = await vmApi(data, ['import', file]);
    t.equal(result.code, 1);
    t.match(result.stderr, says);
    noStack(t, result.stderr, 'import');
  }
  t.equal((await vmApi(data, ['import', '--fast', join(ROOT, 'fixtures', 'demo.ndjson')])).code, 2, 'an option is never a file name');
  t.notOk(existsSync(data), 'no DATA_DIR made by a failed import');

  // A port in use: one line naming it, and the process ends.
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  t.teardown(() => blocker.close());
  const port = String((blocker.address() as { port: number }).port);
  const serving = await vmApi(data, ['serve'], { PORT: port, LOG_LEVEL: 'silent' });
  t.equal(serving.code, 1);
  t.match(serving.stderr, new RegExp(`^port ${port} on 127\\.0\\.0\\.1 is already in use`));
  noStack(t, serving.stderr, 'serve');
});

t.test('keys and institutions: listed, issued for a known institution, revoked once, secrets never echoed', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.remove);
  t.equal((await vmApi(tmp.dir, ['import', join(ROOT, 'fixtures', 'demo.ndjson')])).code, 0);
  const institutions = await vmApi(tmp.dir, ['institutions', 'list']);
  t.match(institutions.stdout, /^id\s+name\s+shifts\s+opportunities/);
  t.match(institutions.stdout, new RegExp(`${RIVERSIDE}\\s+Riverside Community Food Bank\\s+\\d+`));
  const listed = await vmApi(tmp.dir, ['keys', 'list', '--institution', RIVERSIDE]);
  t.match(listed.stdout, /^key_id\s+institution\s+label\s+created\s+revoked\n/);
  t.equal(listed.stdout.trim().split('\n').length, 2, 'one key of that institution');
  const keyId = listed.stdout.split('\n')[1]!.split(/\s+/)[0]!;

  const unknownInstitution = await vmApi(tmp.dir, ['keys', 'issue', '--institution', '0d7c9a1e-2b3f-4c5d-8e6f-708192a3b4c5']);
  t.equal(unknownInstitution.code, 1);
  t.match(unknownInstitution.stderr, /^unknown institution 0d7c9a1e-2b3f-4c5d-8e6f-708192a3b4c5/);

  const size = async () => {
    const store = EmbeddedEventStore.open(join(tmp.dir, 'log'));
    const head = await store.head();
    await store.close();
    return head.commit;
  };
  const unknownKey = await vmApi(tmp.dir, ['keys', 'revoke', '0d7c9a1e-2b3f-4c5d-8e6f-708192a3b4c5']);
  t.equal(unknownKey.code, 1, 'an unknown key id: exit 1');
  t.match(unknownKey.stderr, /^no API key 0d7c9a1e/);
  const pasted = await vmApi(tmp.dir, ['keys', 'revoke', DEMO_KEY]);
  t.equal(pasted.code, 1);
  t.notMatch(pasted.stderr + pasted.stdout, DEMO_KEY, 'a pasted secret is not echoed');

  t.match((await vmApi(tmp.dir, ['keys', 'revoke', keyId])).stdout, `revoked ${keyId}`);
  const before = await size();
  const twice = await vmApi(tmp.dir, ['keys', 'revoke', keyId]);
  t.equal(twice.code, 0);
  t.match(twice.stdout, new RegExp(`^key ${keyId} was already revoked \\(.*\\); nothing appended`));
  t.equal(await size(), before, 'nothing appended');
  t.match((await vmApi(tmp.dir, ['keys', 'list'])).stdout, new RegExp(`${keyId}\\s+${RIVERSIDE}\\s+demo\\s+\\S+\\s+\\S+Z`), 'listed as revoked');
});

t.test('HTTP: 405 says Allow; a replayed answer says Idempotent-Replayed; an Idempotency-Key error names the header', async (t) => {
  const app = await startApp({ fixtures: ['demo.ndjson'] });
  t.teardown(() => app.close());
  const wrong = await app.server.inject({ method: 'DELETE', url: '/api/shifts/', headers: { 'api-key': DEMO_KEY } });
  t.equal(wrong.statusCode, 405);
  t.equal(wrong.headers.allow, 'GET, HEAD', 'HEAD too: Fastify answers it wherever GET is taken');
  const post = () =>
    app.server.inject({
      method: 'POST',
      url: '/api/sites/bulk-create/',
      headers: { 'api-key': DEMO_KEY, 'idempotency-key': 'once' },
      payload: { sites: [{ title: 'Replayed depot' }] },
    });
  const first = await post();
  t.equal(first.statusCode, 201);
  t.equal(first.headers['idempotent-replayed'], undefined);
  const again = await post();
  t.equal(again.statusCode, 201);
  t.equal(again.headers['idempotent-replayed'], 'true');
  t.equal(again.body, first.body);
  const long = await app.server.inject({
    method: 'POST',
    url: '/api/sites/bulk-create/',
    headers: { 'api-key': DEMO_KEY, 'idempotency-key': 'k'.repeat(300) },
    payload: { sites: [{ title: 'Another' }] },
  });
  t.equal(long.statusCode, 400);
  t.match(long.json(), { detail: /^Idempotency-Key header: / });
});

t.test('an import runs at a lower CPU priority than a server (niceness 10), every thread of it: batch work yields to requests', async (t) => {
  const temp = tempDir();
  t.teardown(temp.remove);
  const ours = os.getPriority();
  const file = join(temp.dir, 'many.ndjson');
  const lines = [readFileSync(join(ROOT, 'fixtures', 'demo.ndjson'), 'utf8').trimEnd()];
  for (let i = 0; i < 20_000; i++) {
    lines.push(JSON.stringify({ type: 'CategoryCreated', data: { institution_id: RIVERSIDE, occurred_at: '2026-10-01T10:00:00Z', category_id: randomUUID(), title: `C${i}`, description: '' } }));
  }
  writeFileSync(file, lines.join('\n') + '\n');
  const child = spawn(process.execPath, [CLI, 'import', file], { env: { ...process.env, DATA_DIR: temp.dir }, stdio: 'ignore' });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  let done = false;
  void exited.then(() => (done = true));
  // The niceness is field 19 of /proc/<pid>/stat (after the command name in parentheses), a thread's in
  // /proc/<pid>/task/<tid>/stat (Linux keeps one per thread).
  const nicenessIn = (path: string) => {
    const stat = readFileSync(path, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  };
  let highest = -20;
  /** Once the process runs at 10 or more: the least niceness of any of its threads, and how many threads there were. */
  let lowestThread = Infinity;
  let threads = 0;
  while (!done) {
    try {
      const niceness = nicenessIn(`/proc/${child.pid}/stat`);
      highest = Math.max(highest, niceness);
      if (niceness >= 10) {
        const tasks = readdirSync(`/proc/${child.pid}/task`);
        for (const task of tasks) lowestThread = Math.min(lowestThread, nicenessIn(`/proc/${child.pid}/task/${task}/stat`));
        threads = Math.max(threads, tasks.length);
      }
    } catch {
      // gone between the check and the read
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  t.equal(await exited, 0, 'the import succeeded');
  t.ok(highest >= 10, `it ran at niceness ${highest}`);
  t.ok(threads > 1 && lowestThread >= 10, `every one of its threads (up to ${threads}) at niceness 10 or more (the least: ${lowestThread})`);
  t.equal(os.getPriority(), ours, 'this process (a server, say) keeps its own');
});
