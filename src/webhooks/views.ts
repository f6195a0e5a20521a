/** Webhooks and their delivery attempts as the API shows them (the shapes of http/contract/records.ts). */
import type { z } from 'zod';
import type { WebhookDeliveryRecord, WebhookRecord } from '../../projections/records.js';
import type { EventType } from '../events/catalog.js';
import type * as contract from '../http/contract/records.js';
import { formatTimestamp } from '../time.js';

export function webhookView(record: WebhookRecord): z.infer<typeof contract.webhook> {
  return {
    id: record.id,
    url: record.url,
    // Each one checked against the catalog (deliverableType) when the subscription was made.
    event_types: [...record.event_types] as EventType[],
    status: record.status,
    created_at: formatTimestamp(record.created_at),
  };
}

export function deliveryView(record: WebhookDeliveryRecord): z.infer<typeof contract.webhookDelivery> {
  return {
    event_id: record.event_id,
    attempt: record.attempt,
    status_code: record.status_code,
    error: record.error,
    duration_ms: record.duration_ms,
    delivered_at: formatTimestamp(record.created_at),
  };
}
