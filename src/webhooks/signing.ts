/**
 * A delivery as Standard Webhooks defines it, signed with the
 * `standardwebhooks` package: the body `{"type", "timestamp", "data"}` and
 * the headers webhook-id (the event's id: the same on every retry),
 * webhook-timestamp (unix seconds of this attempt) and webhook-signature
 * (`v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`).
 */
import { Webhook } from 'standardwebhooks';

export interface Payload {
  readonly type: string;
  /** When the event occurred (RFC 3339). */
  readonly timestamp: string;
  readonly data: unknown;
}

export interface SignedDelivery {
  readonly body: string;
  readonly headers: Readonly<Record<'content-type' | 'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string>>;
}

export function signDelivery(secret: string, eventId: string, payload: Payload, now: Date): SignedDelivery {
  const body = JSON.stringify({ type: payload.type, timestamp: payload.timestamp, data: payload.data });
  // Standard Webhooks signs whole seconds.
  const at = new Date(Math.floor(now.getTime() / 1000) * 1000);
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'webhook-id': eventId,
      'webhook-timestamp': String(at.getTime() / 1000),
      'webhook-signature': new Webhook(secret).sign(eventId, at, body),
    },
  };
}
