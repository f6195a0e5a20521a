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

function sink(isTTY: boolean, columns = 120) {
  let text = '';
  const stream = Object.assign(
    new Writable({
      write(chunk, _encoding, done) {
        text += String(chunk);
        done();
      },
    }),
    { isTTY, columns },
  ) as unknown as NodeJS.WriteStream;
  return { stream, text: () => text };
}

/** What a terminal shows of `text`: each row as last drawn (after its last return to the row's start), escapes dropped. */
function screen(text: string): string[] {
  return text
    .split('\n')
    .map((row) => (row.split(/\r|\u001b\[1G/).at(-1) ?? '').replace(/\u001b(\[[0-9;?]*[A-Za-z]|[78])/g, ''))
    .filter(Boolean);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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

t.test('on a terminal: a bar for each phase (cli-progress), redrawn in place: done of the total, the rate and the time left; a phase with no total shows its count', async (t) => {
  const out = sink(true);
  const progress = progressPrinter('import big.ndjson', out.stream);
  progress.update({ phase: 'reading', done: 10_000 });
  progress.update({ phase: 'appending', done: 0, total: 4000 });
  await sleep(1100);
  progress.update({ phase: 'appending', done: 2000, total: 4000 });
  progress.done();
  const [reading, appending, ...more] = screen(out.text());
  t.equal(reading, 'import big.ndjson: reading 10,000', 'the phase before: its last state kept on its line');
  t.match(appending, /^import big\.ndjson: appending \[=+-+\] 50% 2,000 of 4,000 \(1,[0-9]{3}\/s, ETA [0-9]+s\)$/, 'the bar, done of the total, the rate and the time left');
  t.same(more, []);
  t.match(out.text(), /\u001b\[1G[^\n]*\u001b\[1G/, 'redrawn in place: back to the start of its line');
  const ended = out.text();
  await sleep(300);
  t.equal(out.text(), ended, 'once done, no more redraws (its timer stopped)');
});

t.test('on a narrow terminal: the bar shrinks to leave the figures room, and a line is cut to the width, never wrapped (a redraw would leave the wrapped rows behind)', async (t) => {
  const narrow = sink(true, 80);
  const shrunk = progressPrinter('import /data/exports/volunteers.ndjson', narrow.stream);
  shrunk.update({ phase: 'appending', done: 10_000, total: 60_475 });
  shrunk.done();
  const [row] = screen(narrow.text());
  t.match(row, /^import \S+: appending \[=*-+\] 16% 10,000 of 60,475$/, 'the figures whole, a shorter bar');
  t.ok(row!.length < 80, `${row!.length} characters`);

  const tiny = sink(true, 30);
  const cut = progressPrinter('import /data/exports/2026-09-01/volunteers.ndjson', tiny.stream);
  cut.update({ phase: 'appending', done: 1000, total: 4000 });
  cut.done();
  const rows = screen(tiny.text());
  t.equal(rows.length, 1);
  t.ok(rows.every((r) => r.length < 30), `${rows[0]?.length} characters`);
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
