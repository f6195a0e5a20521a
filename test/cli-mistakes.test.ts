/**
 * An operator's mistakes at the command line (run as built): a DATA_DIR that
 * is a file, or that cannot be made. Each is told in one line naming the path
 * and the problem, exit 1, never a stack trace.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { ROOT, tempDir } from './helpers.js';

const run = promisify(execFile);
const CLI = join(ROOT, 'dist', 'src', 'cli', 'main.js');
const DEMO = join(ROOT, 'fixtures', 'demo.ndjson');

async function vmApi(dataDir: string, args: readonly string[]) {
  const env = { ...process.env, DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'silent' };
  return run(process.execPath, [CLI, ...args], { env, timeout: 20_000 }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => e,
  );
}

/** The commands that open DATA_DIR: each must refuse a DATA_DIR it cannot use in the same line. */
const COMMANDS = [['import', DEMO], ['keys', 'list'], ['keys', 'issue', '--institution', 'bf802b36-047d-4718-ad5b-ae9ed495b23f'], ['institutions', 'list'], ['serve']];
const named = (args: readonly string[]) => args.filter((arg) => /^[a-z]+$/.test(arg)).join(' ');

t.test('a DATA_DIR that is a file: one line naming it, exit 1, for every command that opens it', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.remove);
  const file = join(tmp.dir, 'data');
  writeFileSync(file, 'not a directory\n');
  for (const args of COMMANDS) {
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
  for (const args of COMMANDS) {
    const result = await vmApi(under, args);
    t.equal(result.code, 1, `${named(args)}: exit 1`);
    t.equal(result.stderr, `cannot create DATA_DIR ${under}: a part of its path is a file, not a directory\n`, `${named(args)}: one line, no stack trace`);
  }
});
