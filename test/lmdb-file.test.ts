/**
 * The look at an LMDB data file before it is mapped (src/lmdb-file.ts) must
 * never take a file another process is writing for a damaged one: a log is
 * opened by `vm-api import` while `serve` appends to it, and the other way
 * round. Here a child process commits page after page while this one looks,
 * thousands of times; and a file really cut short is still named.
 */
import { spawn } from 'node:child_process';
import { truncateSync, statSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { lmdbFileProblem } from '../src/lmdb-file.js';
import { ROOT, tempDir } from './helpers.js';

t.test('a file growing under another process\'s commits is never called truncated', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.remove);
  const dir = join(tmp.dir, 'env');
  // The writer: small commits of big values, as fast as it can, so the file keeps growing.
  const writer = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import { open } from '${join(ROOT, 'node_modules', 'lmdb', 'index.js')}';
       const db = open({ path: ${JSON.stringify(dir)} });
       const value = 'x'.repeat(20000);
       console.log('open');
       for (let i = 0; ; i++) db.putSync('k' + i, value);`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  t.teardown(() => writer.kill('SIGKILL'));
  await new Promise((resolve) => writer.stdout.once('data', resolve));
  const problems = new Set<string>();
  let looks = 0;
  // Until the file has grown past 10 MB under the looks (a busy CI machine's writer is slow: it took more than 3 s
  // there once) and for at least 3 s; two minutes at most.
  const began = Date.now();
  const grown = () => statSync(join(dir, 'data.mdb')).size > 10_000_000;
  for (;;) {
    const problem = lmdbFileProblem(dir);
    if (problem) problems.add(problem);
    looks++;
    if (looks % 100 !== 0) continue;
    const elapsed = Date.now() - began;
    if (elapsed > 120_000 || (elapsed >= 3000 && grown())) break;
  }
  writer.kill('SIGKILL');
  t.ok(grown(), 'the file grew while it was looked at');
  t.same([...problems], [], `${looks} looks, no problem found`);
  // Cut short for real: named.
  truncateSync(join(dir, 'data.mdb'), 8192 * 3);
  t.match(lmdbFileProblem(dir), /is truncated/);
});
