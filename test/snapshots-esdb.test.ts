/**
 * The snapshot requests answered with the EventStoreDB stand-in as the log:
 * the same answers, byte for byte, as with the embedded log.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { EsdbStandIn } from './esdb-standin/server.js';
import { ROOT, startApp } from './helpers.js';
import { areas } from './snapshots/cases.js';
import { type Answer, answers } from './snapshots/resolve.js';

t.test('every snapshot answer, with EventStoreDB as the log', async (t) => {
  const server = await EsdbStandIn.start();
  t.teardown(() => server.stop());
  const app = await startApp({ fixtures: ['demo.ndjson'], eventstoreUrl: server.connectionString });
  t.teardown(() => app.close());
  for (const [area, cases] of Object.entries(areas)) {
    const expected = JSON.parse(readFileSync(join(ROOT, 'test', 'snapshots', `${area}.json`), 'utf8')) as Answer[];
    const actual = await answers(app, cases);
    for (const a of actual) {
      const e = expected.find((x) => x.name === a.name);
      t.same(a, e, `${area}: ${a.name}`);
    }
  }
});
