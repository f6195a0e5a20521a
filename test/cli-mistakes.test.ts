/**
 * An operator's mistakes at the command line (run as built): a DATA_DIR that
 * is a file, or that cannot be made; a command missing its arguments, or run
 * where there is no event log; an import whose every line is refused. Each is
 * told in one line naming the path and the problem, exit 1 (2 for a usage
 * error), never a stack trace, and a command that fails makes nothing on disk.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { EmbeddedEventStore } from '../src/eventstore/embedded.js';
import { ROOT, tempDir } from './helpers.js';

const run = promisify(execFile);
const CLI = join(ROOT, 'dist', 'src', 'cli', 'main.js');
const DEMO = join(ROOT, 'fixtures', 'demo.ndjson');
const RIVERSIDE = 'bf802b36-047d-4718-ad5b-ae9ed495b23f';
const A_KEY_ID = '0d7c9a1e-2b3f-4c5d-8e6f-708192a3b4c5';

async function vmApi(dataDir: string, args: readonly string[]) {
  const env = { ...process.env, DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'silent' };
  return run(process.execPath, [CLI, ...args], { env, timeout: 20_000 }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => e,
  );
}

/** The commands that open DATA_DIR; `makes`: whether the command makes DATA_DIR (else it only reads a log there). */
const COMMANDS = [
  { args: ['import', DEMO], makes: true },
  { args: ['serve'], makes: true },
  { args: ['rebuild'], makes: false },
  { args: ['keys', 'list'], makes: false },
  { args: ['keys', 'issue', '--institution', RIVERSIDE], makes: false },
  { args: ['keys', 'revoke', A_KEY_ID], makes: false },
  { args: ['institutions', 'list'], makes: false },
];
const named = (args: readonly string[]) => args.filter((arg) => /^[a-z]+$/.test(arg)).join(' ');

/** An NDJSON file none of whose lines can be imported. */
function refusedFile(dir: string): string {
  const file = join(dir, 'refused.ndjson');
  writeFileSync(file, '{"type": "ShiftCreated", "data": \n{"type": "ShiftExploded", "data": {}}\n');
  return file;
}

t.test('a DATA_DIR that is a file: one line naming it, exit 1, for every command that opens it', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.remove);
  const file = join(tmp.dir, 'data');
  writeFileSync(file, 'not a directory\n');
  for (const { args } of COMMANDS) {
    const result = await vmApi(file, args);
    t.equal(result.code, 1, `${named(args)}: exit 1`);
    t.equal(result.stderr, `DATA_DIR ${file} is not a directory\n`, `${named(args)}: one line, no stack trace`);
  }
});

t.test('a DATA_DIR that cannot be made (a file on its path): one line naming it and why, exit 1', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.remove);
  const file = join(tmp.dir, 'a-file');
  writeFileSync(file, 'not a directory\n');
  const under = join(file, 'data');
  for (const { args, makes } of COMMANDS) {
    const result = await vmApi(under, args);
    t.equal(result.code, 1, `${named(args)}: exit 1`);
    const problem = `${makes ? 'cannot create' : 'cannot use'} DATA_DIR ${under}: a part of its path is a file, not a directory\n`;
    t.equal(result.stderr, problem, `${named(args)}: one line, no stack trace`);
  }
});

t.test('keys refused for their arguments: the usage or one line, and no DATA_DIR made (the arguments are checked first)', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.remove);
  const data = join(tmp.dir, 'data');
  for (const [args, code, says] of [
    [['keys', 'revoke'], 2, /^keys revoke needs <key_id>\n/],
    [['keys', 'issue'], 2, /^keys issue needs --institution <id>\n/],
    [['keys', 'issue', '--label', 'reporting'], 2, /^keys issue needs --institution <id>\n/],
    [['keys', 'revoke', 'vm_not_a_key_id'], 1, /^that is not a key id/],
    [['keys', 'rotate'], 2, /^keys issue \| keys revoke \| keys list\n/],
  ] as const) {
    const result = await vmApi(data, args);
    t.equal(result.code, code, `${args.join(' ')}: exit ${code}`);
    t.match(result.stderr, says);
    t.notOk(existsSync(data), `${args.join(' ')}: no DATA_DIR made`);
  }
});

t.test('keys and institutions where there is no event log: they say so, exit 1, and make none', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.remove);
  const missing = join(tmp.dir, 'missing');
  const empty = join(tmp.dir, 'empty');
  mkdirSync(empty);
  for (const [args, nothingTo] of [
    [['keys', 'list'], 'no keys to list'],
    [['keys', 'list', '--institution', RIVERSIDE], 'no keys to list'],
    [['keys', 'issue', '--institution', RIVERSIDE], 'no institution to issue a key for'],
    [['keys', 'revoke', A_KEY_ID], 'no key to revoke'],
    [['institutions', 'list'], 'no institutions to list'],
  ] as const) {
    for (const dir of [missing, empty]) {
      const result = await vmApi(dir, args);
      const where = `${args.join(' ')} in ${dir === missing ? 'a missing' : 'an empty'} DATA_DIR`;
      t.equal(result.code, 1, `${where}: exit 1`);
      t.equal(result.stderr, `no event log in ${dir}: ${nothingTo} (import a file first)\n`, `${where}: says there is no log`);
    }
    t.notOk(existsSync(missing), `${args.join(' ')}: no DATA_DIR made`);
    t.same(readdirSync(empty), [], `${args.join(' ')}: nothing made in an empty DATA_DIR`);
  }
});

t.test('an import that appends nothing leaves no log behind, and never touches a log that was there', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.remove);
  const refused = refusedFile(tmp.dir);

  const data = join(tmp.dir, 'parent', 'data');
  const none = await vmApi(data, ['import', refused]);
  t.equal(none.code, 1);
  t.match(none.stderr, /nothing was imported/);
  t.notOk(existsSync(join(tmp.dir, 'parent')), 'no DATA_DIR (nor its parent) left where there was none');

  const empty = join(tmp.dir, 'empty');
  mkdirSync(empty);
  t.equal((await vmApi(empty, ['import', refused])).code, 1);
  t.same(readdirSync(empty), [], 'an empty DATA_DIR is left empty: no log');

  const kept = join(tmp.dir, 'kept');
  await EmbeddedEventStore.open(join(kept, 'log')).close();
  t.equal((await vmApi(kept, ['import', refused])).code, 1);
  t.ok(existsSync(join(kept, 'log', 'data.mdb')), 'a log that was there stays, empty as it is');

  const partly = join(tmp.dir, 'partly');
  const twoFiles = await vmApi(partly, ['import', DEMO, refused]);
  t.equal(twoFiles.code, 1, 'the second file refused');
  const store = EmbeddedEventStore.open(join(partly, 'log'));
  t.ok((await store.head()).commit > 0n, 'the log the first file was appended to stays');
  await store.close();
});

t.test('keys list --institution of an institution the log does not hold: "unknown institution", exit 1, as keys issue says it', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.remove);
  t.equal((await vmApi(tmp.dir, ['import', DEMO])).code, 0);
  for (const command of [['keys', 'list'], ['keys', 'issue']]) {
    const unknown = await vmApi(tmp.dir, [...command, '--institution', A_KEY_ID]);
    t.equal(unknown.code, 1, `${command.join(' ')}: exit 1`);
    t.equal(unknown.stdout, '', `${command.join(' ')}: no table, no key`);
    t.equal(unknown.stderr, `unknown institution ${A_KEY_ID}: \`vm-api institutions list\` shows them\n`, `${command.join(' ')}: one line naming it`);
  }
  const notAnId = await vmApi(tmp.dir, ['keys', 'list', '--institution', 'riverside']);
  t.equal(notAnId.code, 1, 'not an id: exit 1');
  t.match(notAnId.stderr, /^unknown institution \(not an institution id\)/, 'what is not an id is not echoed');
  const known = await vmApi(tmp.dir, ['keys', 'list', '--institution', RIVERSIDE.toUpperCase()]);
  t.equal(known.code, 0, 'a known institution (in any case) lists its keys');
  t.equal(known.stdout.trim().split('\n').length, 2, 'its one key');
});
