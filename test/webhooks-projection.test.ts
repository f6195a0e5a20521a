/**
 * The webhooks projection, a pure fold: given the log's webhook events,
 * then the subscription and its attempts. The cursor starts at the
 * subscription's own position and moves only on a 2xx (never back);
 * failures count the attempts since; pausing and resuming; unsubscribing
 * drops the subscription and its attempts. Then the same records survive
 * a rebuild (written as a snapshot) and a restart.
 */
import { randomUUID } from 'node:crypto';
import t from 'tap';
import type { EventData } from '../src/events/catalog.js';
import type { Position, RecordedEvent } from '../src/eventstore/port.js';
import { EventFolder } from '../src/readmodel/folder.js';
import { ReadModel } from '../src/readmodel/model.js';
import { tableDefs } from '../src/resources/index.js';
import { openRuntime } from '../src/runtime.js';
import { tempDir } from './helpers.js';

const INSTITUTION = '11111111-1111-4111-8111-111111111111';
const WEBHOOK = '22222222-2222-4222-8222-222222222222';
const at = (n: number): Position => ({ commit: BigInt(n), prepare: BigInt(n) });
const occurred_at = '2026-11-01T12:00:00Z';
const base = { institution_id: INSTITUTION, occurred_at, webhook_id: WEBHOOK };

type Typed = { [T in 'WebhookSubscribed' | 'WebhookAttempted' | 'WebhookPaused' | 'WebhookResumed' | 'WebhookUnsubscribed']: [T, EventData<T>] }[
  'WebhookSubscribed' | 'WebhookAttempted' | 'WebhookPaused' | 'WebhookResumed' | 'WebhookUnsubscribed'
];

/** The events at positions 1, 2, … of the webhook's stream. */
function log(...events: Typed[]): RecordedEvent[] {
  return events.map(([type, data], i) => ({ id: randomUUID(), type, stream: `webhook-${WEBHOOK}`, revision: i, position: at(i + 1), data }));
}

const subscribed: Typed = ['WebhookSubscribed', { ...base, url: 'https://example.org/hook', event_types: ['SiteCreated'], secret: 'whsec_c2VjcmV0' }];
const attempted = (event: number, status_code: number | null, attempt = 1, institution_id = INSTITUTION): Typed => [
  'WebhookAttempted',
  { ...base, institution_id, event_id: `e${event}`, event_position: { commit: String(event), prepare: String(event) }, attempt, status_code, error: status_code === 200 ? null : 'failed', duration_ms: 3 },
];

function fold(events: RecordedEvent[]) {
  const model = new ReadModel(tableDefs);
  new EventFolder(model).fold(events, { commit: -1n, prepare: -1n });
  return model;
}

t.test('the cursor moves on a 2xx only, and never back', async (t) => {
  const model = fold(log(subscribed, attempted(10, 500), attempted(10, null, 2), attempted(10, 200, 3), attempted(5, 200), attempted(12, 503)));
  t.match(model.get('webhook', WEBHOOK), {
    institution_id: INSTITUTION,
    url: 'https://example.org/hook',
    event_types: ['SiteCreated'],
    status: 'active',
    cursor_commit: 10,
    cursor_prepare: 10,
    failures: 1,
    deliveries: 5,
  });
  t.same(
    [0, 1, 2, 3, 4].map((n) => model.get('webhookdelivery', `${WEBHOOK}/${n}`)).map((d) => [d?.event_id, d?.attempt, d?.status_code]),
    [['e10', 1, 500], ['e10', 2, null], ['e10', 3, 200], ['e5', 1, 200], ['e12', 1, 503]],
  );
  t.match(fold(log(subscribed)).get('webhook', WEBHOOK), { cursor_commit: 1, cursor_prepare: 1, failures: 0, deliveries: 0 }, 'the cursor starts at the subscription');
});

t.test('pausing, resuming, unsubscribing', async (t) => {
  const paused = fold(log(subscribed, attempted(10, 500), ['WebhookPaused', { ...base, reason: '1 attempts failed' }]));
  t.match(paused.get('webhook', WEBHOOK), { status: 'paused', failures: 1, cursor_commit: 1 });
  const resumed = fold(log(subscribed, attempted(10, 500), ['WebhookPaused', { ...base, reason: 'x' }], ['WebhookResumed', base]));
  t.match(resumed.get('webhook', WEBHOOK), { status: 'active', failures: 0, cursor_commit: 1 }, 'resumed at the same cursor, attempts counted anew');
  const gone = fold(log(subscribed, attempted(10, 200), attempted(11, 200), ['WebhookUnsubscribed', base], attempted(12, 200)));
  t.equal(gone.get('webhook', WEBHOOK), undefined);
  t.equal(gone.count('webhookdelivery'), 0, 'its attempts go with it, and a late one is folded as nothing');
  const other = fold(log(subscribed, attempted(10, 200, 1, '33333333-3333-4333-8333-333333333333')));
  t.equal(other.count('webhookdelivery'), 0, 'an attempt said to be of another institution changes nothing');
  t.match(other.get('webhook', WEBHOOK), { deliveries: 0, cursor_commit: 1 });
});

t.test('the records survive a rebuild (a snapshot) and a restart', async (t) => {
  const tmp = tempDir();
  t.teardown(() => tmp.remove());
  const config = { DATA_DIR: tmp.dir, EVENTSTORE_URL: undefined };
  const events = log(subscribed, attempted(10, 500), attempted(10, 200, 2), ['WebhookPaused', { ...base, reason: 'x' }]);
  const writer = openRuntime(config);
  await writer.store.append(`webhook-${WEBHOOK}`, events.map((e) => ({ id: e.id, type: e.type, data: e.data })));
  const expected = fold(events);
  const records = (model: ReadModel) => ({ webhooks: [...model.records('webhook')], deliveries: [...model.records('webhookdelivery')] });
  await writer.projector.load();
  await writer.projector.catchUp();
  t.same(records(writer.model), records(expected), 'folded by the projector as by the pure fold');
  await writer.close();

  const restarted = openRuntime(config);
  t.teardown(() => restarted.close());
  await restarted.projector.load();
  t.same(records(restarted.model), records(expected), 'loaded from the snapshot');
});
