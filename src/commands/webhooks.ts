/**
 * The command side of webhooks: subscribe, unsubscribe and resume append
 * to the webhook's own stream and answer once the read model shows the
 * change (a GET right after sees it). A subscription made with an
 * Idempotency-Key gets an id derived from the institution and the key, so
 * a retry finds the stream it made: the same body answers the first
 * response again (its secret included), another body is a 422.
 */
import { createHash, randomUUID } from 'node:crypto';
import { type EventData, webhookStream } from '../events/catalog.js';
import { type EventStore, WrongExpectedRevisionError } from '../eventstore/port.js';
import type { ReadModel } from '../readmodel/model.js';
import type { Projector } from '../readmodel/projector.js';
import { formatTimestamp, parseEventTimestamp } from '../time.js';
import type { AddressGuard } from '../webhooks/address-guard.js';
import { newSecret, type SecretBox } from '../webhooks/secrets.js';
import { webhookView } from '../webhooks/views.js';
import type { CommandResult } from './handler.js';

export interface Subscribe {
  readonly url: string;
  readonly event_types: readonly string[];
  readonly idempotency?: { readonly key: string; readonly sha256: string } | undefined;
}

export interface WebhookCommandOptions {
  readonly store: EventStore;
  readonly projector: Projector;
  readonly model: ReadModel;
  readonly secrets: SecretBox;
  readonly guard: AddressGuard;
  readonly allowHttp: boolean;
  readonly clock?: () => number;
}

const rejected = (status: number, detail: string): CommandResult => ({ status, detail });

/** A UUID (version 4 layout) made from the institution and an Idempotency-Key. */
function keyedId(institutionId: string, key: string): string {
  const hex = createHash('sha256').update(`webhook\n${institutionId}\n${key}`).digest('hex');
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export class WebhookCommands {
  private readonly clock: () => number;

  constructor(private readonly options: WebhookCommandOptions) {
    this.clock = options.clock ?? Date.now;
  }

  /** Why a subscription URL is refused (undefined: it is taken). */
  private async urlRefusal(url: string): Promise<string | undefined> {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return 'url: must be an absolute URL.';
    }
    const http = parsed.protocol === 'http:';
    if (parsed.protocol !== 'https:' && !(http && this.options.allowHttp)) {
      return `url: must be https://${this.options.allowHttp ? ' or http://' : ' (http:// only with WEBHOOK_ALLOW_HTTP=true)'}.`;
    }
    if (parsed.username !== '' || parsed.password !== '') return 'url: must not hold a user name or password.';
    const refusal = await this.options.guard.hostRefusal(parsed.hostname);
    return refusal === undefined ? undefined : `url: refused: ${refusal} (deliveries go to public addresses only).`;
  }

  async subscribe(institutionId: string, command: Subscribe): Promise<CommandResult> {
    const refusal = await this.urlRefusal(command.url);
    if (refusal !== undefined) return rejected(400, refusal);
    const { store, projector, secrets } = this.options;
    const key = command.idempotency;
    const id = key ? keyedId(institutionId, key.key) : randomUUID();
    const stream = webhookStream(id);
    for (;;) {
      if (key) {
        const [first] = await store.readStream(stream, 0);
        if (first) {
          const made = first.data as EventData<'WebhookSubscribed'>;
          if (first.type !== 'WebhookSubscribed' || made.request_sha256 !== key.sha256) {
            return rejected(422, `Idempotency-Key "${key.key}" was used with a different request.`);
          }
          await projector.waitFor(first.position);
          return { status: 201, body: this.created(made), replayed: true };
        }
      }
      const secret = newSecret();
      const data: EventData<'WebhookSubscribed'> = {
        institution_id: institutionId,
        occurred_at: formatTimestamp(this.clock() * 1000),
        webhook_id: id,
        url: command.url,
        event_types: [...new Set(command.event_types)],
        secret: secrets.seal(secret, id),
        ...(key ? { request_sha256: key.sha256 } : {}),
      };
      try {
        const { position } = await store.append(stream, [{ id: randomUUID(), type: 'WebhookSubscribed', data }], 'no_stream');
        await projector.waitFor(position);
        return { status: 201, body: { ...this.created(data), secret } };
      } catch (error) {
        // The same key at the same time: answer as the request that made it.
        if (!(error instanceof WrongExpectedRevisionError) || !key) throw error;
      }
    }
  }

  /** The creation's answer (the secret as stored opened again). */
  private created(data: EventData<'WebhookSubscribed'>) {
    return {
      id: data.webhook_id,
      url: data.url,
      event_types: data.event_types,
      status: 'active' as const,
      secret: this.options.secrets.open(data.secret, data.webhook_id),
      created_at: formatTimestamp(parseEventTimestamp(data.occurred_at) ?? 0),
    };
  }

  async unsubscribe(institutionId: string, webhookId: string): Promise<CommandResult> {
    if (!this.of(institutionId, webhookId)) return rejected(404, 'Not found.');
    await this.append(institutionId, webhookId, 'WebhookUnsubscribed');
    return { status: 204, body: null };
  }

  async resume(institutionId: string, webhookId: string): Promise<CommandResult> {
    const webhook = this.of(institutionId, webhookId);
    if (!webhook) return rejected(404, 'Not found.');
    if (webhook.status === 'paused') await this.append(institutionId, webhookId, 'WebhookResumed');
    const now = this.of(institutionId, webhookId);
    return now ? { status: 200, body: webhookView(now) } : rejected(404, 'Not found.');
  }

  /** The institution's webhook (undefined: none, or another institution's). */
  private of(institutionId: string, webhookId: string) {
    const webhook = this.options.model.get('webhook', webhookId);
    return webhook?.institution_id === institutionId ? webhook : undefined;
  }

  private async append(institutionId: string, webhookId: string, type: 'WebhookUnsubscribed' | 'WebhookResumed'): Promise<void> {
    const data = { institution_id: institutionId, occurred_at: formatTimestamp(this.clock() * 1000), webhook_id: webhookId };
    const { position } = await this.options.store.append(webhookStream(webhookId), [{ id: randomUUID(), type, data }]);
    await this.options.projector.waitFor(position);
  }
}
