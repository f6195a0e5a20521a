/**
 * The soak's one-minute form (`npm run soak -- --minutes 15` is the long one,
 * by hand): `vm-api serve` under the random search mix, sites writes and a
 * background `vm-api import` every 10 s, in windows of 15 s after 45 s of the
 * same load unmeasured (the heap and the caches settling). It passes only
 * with no request erring and the last window's p99 within 3× the first's.
 * Memory is not judged here: the issue's rule is growth after the first two
 * minutes of load, and before them the lowest anonymous RSS of a window
 * follows V8's major collections (in one-minute runs it rose 0 to 22 %,
 * 41.8 % with no writers while the heap came back to where it was). The soak
 * says so in its output, which this checks. `npm test` runs it after the rest
 * of the suite, alone.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { ROOT } from './helpers.js';

const run = promisify(execFile);

t.test('one minute of searches, writes and imports at once', async (t) => {
  const args = ['--minutes', '1', '--warmup', '45', '--window', '15', '--shifts', '20000', '--import-events', '1000', '--connections', '8', '--queries', '3000', '--seed', '1'];
  const { stdout } = await run(process.execPath, [join(ROOT, 'dist', 'bench', 'soak.js'), ...args], { maxBuffer: 1 << 24 }).catch((error: { stdout: string; stderr: string; code: number }) => {
    t.fail(`the soak failed (exit ${error.code}):\n${error.stdout}\n${error.stderr}`);
    return { stdout: error.stdout };
  });
  t.comment(stdout);
  const rows = stdout.split('\n').filter((line) => /^\s+\d+\.\d\s+[\d,]+\s/.test(line));
  t.ok(rows.length >= 4, `${rows.length} windows reported`);
  t.match(stdout, /^PASS {2}errors: 0$/m);
  t.match(stdout, /^PASS {2}p99 of the last window/m);
  // Memory is judged after two minutes of load only (`npm run soak -- --minutes 15` by hand): said so, not passed.
  t.match(stdout, /^n\/a {3}RSS growth: not judged/m);
  // Every window saw reads, writes and (all but the first) imports.
  for (const row of rows) t.ok(Number(row.trim().split(/\s+/)[1]!.replace(/,/g, '')) > 0, `requests in ${row.trim()}`);
});
