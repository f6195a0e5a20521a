/**
 * Snapshot tests: import the demo fixture, make each request of
 * test/snapshots/cases.ts and compare status and body with the answers kept
 * in test/snapshots/<area>.json. Update on purpose with
 * `npm run snapshots:update` (UPDATE_SNAPSHOTS=1).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { areas } from './snapshots/cases.js';
import { type Answer, answers } from './snapshots/resolve.js';
import { ROOT, startApp, type TestApp } from './helpers.js';

const UPDATE = process.env.UPDATE_SNAPSHOTS === '1';
let app: TestApp;
t.before(async () => {
  app = await startApp({ fixtures: ['demo.ndjson'] });
});
t.teardown(() => app.close());

for (const [area, cases] of Object.entries(areas)) {
  t.test(area, async (t) => {
    const file = join(ROOT, 'test', 'snapshots', `${area}.json`);
    const actual = await answers(app, cases);
    if (UPDATE) {
      writeFileSync(file, JSON.stringify(actual, null, 2) + '\n');
      t.pass(`updated ${file}`);
      return;
    }
    t.ok(existsSync(file), `${file} exists (create it with npm run snapshots:update)`);
    if (!existsSync(file)) return;
    const expected = JSON.parse(readFileSync(file, 'utf8')) as Answer[];
    t.same(
      actual.map((a) => a.name),
      expected.map((e) => e.name),
      'the same cases as the snapshot',
    );
    for (const a of actual) {
      const e = expected.find((x) => x.name === a.name);
      t.same(a, e, a.name);
    }
  });
}
