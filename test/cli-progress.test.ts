/**
 * Progress of long commands: a plain line now and then when stderr is not
 * a terminal (phase, done of total, rate, time left), one line rewritten
 * in place on a terminal; `vm-api import` reporting through it, and every
 * `vm-api rebuild`, on one thread or several.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import t from 'tap';
import { progressPrinter } from '../src/cli/progress.js';
import { importEvents, type ImportProgress } from '../src/importer/import.js';
import { fixturePath, readFixture, ROOT, startApp, tempDir } from './helpers.js';

const run = promisify(execFile);
const CLI = join(ROOT, 'dist', 'src', 'cli', 'main.js');

function sink(isTTY: boolean) {
  let text = '';
  const stream = Object.assign(
    new Writable({
      write(chunk, _encoding, done) {
        text += String(chunk);
        done();
      },
    }),
    { isTTY },
  ) as unknown as NodeJS.WriteStream;
  return { stream, text: () => text };
}

t.test('not on a terminal: a plain line for each update due, with the rate and time left once a phase has run a second', async (t) => {
  const out = sink(false);
  let now = 0;
  const progress = progressPrinter('import demo.ndjson', out.stream, 0, () => now);
  now = 2000;
  progress.update({ phase: 'reading', done: 10_000 });
  now = 2010;
  progress.update({ phase: 'appending', done: 20_000, total: 80_000 });
  now = 4010;
  progress.update({ phase: 'appending', done: 40_000, total: 80_000 });
  progress.done();
  const lines = out.text().split('\n').filter(Boolean);
  t.equal(lines.length, 3);
  t.equal(lines[0], 'import demo.ndjson: reading 10,000', 'no rate at a phase\'s start');
  t.equal(lines[1], 'import demo.ndjson: appending 20,000 of 80,000', 'nor 10 ms into it');
  t.equal(lines[2], 'import demo.ndjson: appending 40,000 of 80,000 (20,000/s, about 2 s left)');
});

t.test('not on a terminal: a line every few seconds, and at once when a phase begins', async (t) => {
  const out = sink(false);
  let now = 0;
  const progress = progressPrinter('import big.ndjson', out.stream, 3000, () => now);
  for (const [at, phase, done] of [
    [5000, 'checking', 100_000],
    [6000, 'checking', 200_000],
    [6500, 'appending', 10_000],
    [7000, 'appending', 20_000],
    [9600, 'appending', 70_000],
  ] as const) {
    now = at;
    progress.update({ phase, done, total: phase === 'appending' ? 200_000 : undefined });
  }
  const lines = out.text().split('\n').filter(Boolean);
  t.same(
    lines.map((line) => line.replace(/ \(.*\)$/, '')),
    ['import big.ndjson: checking 100,000', 'import big.ndjson: appending 10,000 of 200,000', 'import big.ndjson: appending 70,000 of 200,000'],
    'the first appending line half a second into the interval, then the next due three seconds after it',
  );
});

t.test('on a terminal: one line rewritten in place, ended once done', async (t) => {
  const out = sink(true);
  const progress = progressPrinter('rebuild', out.stream, 0);
  progress.update({ phase: 'replaying', done: 1, total: 4 });
  progress.update({ phase: 'replaying', done: 2, total: 4 });
  progress.done();
  t.match(out.text(), /^\rrebuild: replaying 1 of 4.*\u001b\[K\rrebuild: replaying 2 of 4.*\u001b\[K\n$/);
});

t.test('an import tells how far it is: lines checked against the log, events appended of the total', async (t) => {
  const app = await startApp();
  t.teardown(() => app.close());
  const seen: ImportProgress[] = [];
  const text = readFixture('demo.ndjson');
  const { appended } = await importEvents(app.runtime.store, 'demo.ndjson', text, { onProgress: (p) => seen.push(p) });
  const appending = seen.filter((p) => p.phase === 'appending');
  t.ok(appending.length > 0);
  t.same(appending.at(-1), { phase: 'appending', done: appended, total: appended }, 'the last update: every event appended');
});

t.test('every rebuild shows its progress, on one thread as on several: a line at once when stderr is not a terminal', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.remove);
  const vmApi = (...args: string[]) => run(process.execPath, [CLI, ...args], { env: { ...process.env, DATA_DIR: tmp.dir }, timeout: 60_000 });
  await vmApi('import', fixturePath('demo.ndjson'));
  const events = readFixture('demo.ndjson').trim().split('\n').length;
  for (const args of [['--threads', '1'], [], ['--threads', '2']]) {
    const { stdout, stderr } = await vmApi('rebuild', ...args);
    t.match(stdout, new RegExp(`^rebuilt the read model from ${events} events`), `${['rebuild', ...args].join(' ')}: rebuilt`);
    t.match(stderr, new RegExp(`^rebuild: replaying ${events} of ${events}$`, 'm'), `${['rebuild', ...args].join(' ')}: the events replayed of the log's`);
  }
});
