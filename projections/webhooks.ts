/**
 * Webhook subscriptions and their delivery attempts. A subscription's
 * cursor starts at its own place in the log and moves to an event's place
 * when that event got a 2xx; each attempt is a record of its own,
 * `<webhook id>/<n>`, so a page of deliveries is found by number. An
 * unsubscribed webhook leaves the model with its attempts.
 */
import { put, remove, type Change, type Projection } from './projection.js';
import type { WebhookRecord } from './records.js';

/** The id of a webhook's n-th delivery attempt (from 0). */
export const deliveryId = (webhookId: string, n: number) => `${webhookId}/${n}`;

const isSuccess = (status: number | null) => status !== null && status >= 200 && status < 300;

/** Whether position a is after position b. */
const after = (commit: number, prepare: number, b: Pick<WebhookRecord, 'cursor_commit' | 'cursor_prepare'>) =>
  commit > b.cursor_commit || (commit === b.cursor_commit && prepare > b.cursor_prepare);

export const webhooks: Projection = {
  name: 'webhooks',
  WebhookSubscribed: (_view, d, at, position) => [
    put('webhook', {
      id: d.webhook_id,
      institution_id: d.institution_id,
      url: d.url,
      event_types: d.event_types,
      status: 'active',
      secret: d.secret,
      cursor_commit: Number(position.commit),
      cursor_prepare: Number(position.prepare),
      failures: 0,
      deliveries: 0,
      created_at: at,
      updated_at: at,
    }),
  ],
  WebhookUnsubscribed: (view, d) => {
    const webhook = view.get('webhook', d.webhook_id);
    if (!webhook) return [];
    const changes: Change[] = [remove('webhook', webhook.id)];
    for (let n = 0; n < webhook.deliveries; n++) changes.push(remove('webhookdelivery', deliveryId(webhook.id, n)));
    return changes;
  },
  WebhookPaused: (view, d, at) => {
    const webhook = view.get('webhook', d.webhook_id);
    return webhook && webhook.status !== 'paused' ? [put('webhook', { ...webhook, status: 'paused', updated_at: at })] : [];
  },
  WebhookResumed: (view, d, at) => {
    const webhook = view.get('webhook', d.webhook_id);
    return webhook && webhook.status !== 'active' ? [put('webhook', { ...webhook, status: 'active', failures: 0, updated_at: at })] : [];
  },
  WebhookAttempted: (view, d, at) => {
    const webhook = view.get('webhook', d.webhook_id);
    if (!webhook) return [];
    const commit = Number(d.event_position.commit);
    const prepare = Number(d.event_position.prepare);
    const delivered = isSuccess(d.status_code);
    const moves = delivered && after(commit, prepare, webhook);
    const next: WebhookRecord = {
      ...webhook,
      cursor_commit: moves ? commit : webhook.cursor_commit,
      cursor_prepare: moves ? prepare : webhook.cursor_prepare,
      failures: delivered ? 0 : webhook.failures + 1,
      deliveries: webhook.deliveries + 1,
      updated_at: at,
    };
    return [
      put('webhook', next),
      put('webhookdelivery', {
        id: deliveryId(webhook.id, webhook.deliveries),
        institution_id: webhook.institution_id,
        webhook_id: webhook.id,
        event_id: d.event_id,
        attempt: d.attempt,
        status_code: d.status_code,
        error: d.error,
        duration_ms: d.duration_ms,
        created_at: at,
        updated_at: at,
      }),
    ];
  },
};
