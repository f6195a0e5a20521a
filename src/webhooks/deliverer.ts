/**
 * The deliverer: runs beside the server (started and stopped with it) and
 * POSTs each subscription's events, one subscription per worker, in log
 * order, the next event only once the one before got a 2xx.
 *
 * A worker reads the log after its subscription's cursor (the position
 * of the last event delivered with a 2xx, in the read model), up to the
 * position the read model has applied, skipping events of other
 * institutions, of other types than the subscription's, and the types no
 * webhook gets. Each attempt is appended to the webhook's stream as
 * WebhookAttempted (so deliveries and the cursor are in the log: they
 * survive restarts and every replica sees them); a failed one is retried
 * after a capped exponential backoff with jitter, and the last allowed
 * failure appends WebhookPaused with it. So after a restart delivery goes
 * on from the cursor. What can repeat: an attempt whose answer came but
 * whose WebhookAttempted was not appended (a crash, a stop in between, the
 * log unreachable) is made again, with the same webhook-id.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { WebhookRecord } from '../../projections/records.js';
import { type EventData, isCatalogEvent, isDeliverableType, webhookStream } from '../events/catalog.js';
import { comparePositions, type EventStore, type Position, type RecordedEvent } from '../eventstore/port.js';
import { institutionOfEvent } from '../readmodel/folder.js';
import type { ReadModel } from '../readmodel/model.js';
import type { Projector } from '../readmodel/projector.js';
import { formatTimestamp } from '../time.js';
import { AddressGuard } from './address-guard.js';
import { type SecretBox, UnreadableSecretError } from './secrets.js';
import { type AttemptOutcome, send } from './sender.js';
import type { WebhookSettings } from './settings.js';
import { signDelivery } from './signing.js';

/** How often subscriptions are looked for, and how long an idle worker waits before looking at the log again (ms). */
const TICK_MS = 50;
/** Events read from the log at once. */
const READ_BATCH = 200;
/** The longest wait between two attempts (ms). */
const MAX_BACKOFF_MS = 15 * 60_000;
/** The wait after a failure to read the log or record an attempt (ms). */
const ERROR_PAUSE_MS = 1000;

/** The wait before the attempt after `attempt` failed: base × 2^(attempt−1), capped, of which a random half to all. */
export function backoffMs(attempt: number, baseMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(baseMs * 2 ** (attempt - 1), MAX_BACKOFF_MS);
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/** Whether a subscription gets this event. */
export function wants(webhook: WebhookRecord, event: RecordedEvent): boolean {
  return (
    isCatalogEvent(event) &&
    isDeliverableType(event.type) &&
    institutionOfEvent(event) === webhook.institution_id &&
    (webhook.event_types.length === 0 || webhook.event_types.includes(event.type))
  );
}

const cursorOf = (webhook: WebhookRecord): Position => ({ commit: BigInt(webhook.cursor_commit), prepare: BigInt(webhook.cursor_prepare) });

export interface DelivererOptions {
  readonly store: EventStore;
  readonly model: ReadModel;
  readonly projector: Projector;
  readonly settings: WebhookSettings;
  readonly secrets: SecretBox;
  readonly log?: FastifyBaseLogger | undefined;
  /** Whether the read model is ready to be read (absent: it is). */
  readonly ready?: (() => boolean) | undefined;
}

export class Deliverer {
  private readonly workers = new Map<string, Promise<void>>();
  private readonly guard: AddressGuard;
  private readonly stopping = new AbortController();
  /** Resolves when the deliverer stops. */
  private readonly stopped = new Promise<void>((resolve) => this.stopping.signal.addEventListener('abort', () => resolve(), { once: true }));
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: DelivererOptions) {
    this.guard = new AddressGuard(options.settings.allowPrivateNetworks);
  }

  /** Start delivering (nothing when WEBHOOK_DELIVERY is false). */
  start(): void {
    if (!this.options.settings.delivery || this.timer || this.stopping.signal.aborted) return;
    this.timer = setInterval(() => this.tick(), TICK_MS);
    // Never what keeps a process alive: the server is.
    this.timer.unref();
    this.tick();
  }

  /** Stop: attempts under way are aborted (and not recorded: they are made again after a restart); resolves once every worker is done. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.stopping.abort();
    await Promise.all(this.workers.values());
  }

  /** A worker for every active subscription that has none. */
  private tick(): void {
    if (this.stopping.signal.aborted || !(this.options.ready?.() ?? true)) return;
    for (const webhook of this.options.model.records('webhook')) {
      if (webhook.status !== 'active' || this.workers.has(webhook.id)) continue;
      const id = webhook.id;
      const work = this.work(id)
        .catch((error: unknown) => {
          if (!this.stopping.signal.aborted) this.options.log?.warn({ err: error, webhook_id: id }, 'webhook delivery interrupted; it resumes from its cursor');
        })
        .finally(() => this.workers.delete(id));
      this.workers.set(id, work);
    }
  }

  /** Wait `ms`, or less if the deliverer stops. */
  private async pause(ms: number): Promise<void> {
    await sleep(ms, undefined, { signal: this.stopping.signal }).catch(() => undefined);
  }

  /** Deliver one subscription's events while it is active. */
  private async work(id: string): Promise<void> {
    const { model, log } = this.options;
    /** The last event looked at (the cursor, or past it over events the subscription does not get). */
    let scanned: Position | undefined;
    while (!this.stopping.signal.aborted) {
      const webhook = model.get('webhook', id);
      if (!webhook || webhook.status !== 'active') return;
      try {
        scanned = await this.step(webhook, scanned);
      } catch (error) {
        // The log unreachable (or another failure): try again from the cursor in a while.
        if (this.stopping.signal.aborted) return;
        log?.warn({ err: error, webhook_id: id }, 'webhook delivery failed to read or record; retrying');
        scanned = undefined;
        await this.pause(ERROR_PAUSE_MS);
      }
    }
  }

  /**
   * Look at the log after `scanned` (at least the cursor) up to what the
   * read model has applied: attempt the first event the subscription gets,
   * or wait a tick when there is nothing new. The last event looked at.
   */
  private async step(webhook: WebhookRecord, after: Position | undefined): Promise<Position> {
    const { projector, store } = this.options;
    const cursor = cursorOf(webhook);
    let scanned = after && comparePositions(after, cursor) >= 0 ? after : cursor;
    const applied = projector.status().position;
    let next: RecordedEvent | undefined;
    let moved = false;
    if (comparePositions(scanned, applied) < 0) {
      for (const event of await store.readAll(scanned, READ_BATCH)) {
        if (comparePositions(event.position, applied) > 0) break;
        if (wants(webhook, event)) {
          next = event;
          break;
        }
        scanned = event.position;
        moved = true;
      }
    }
    if (next) await this.attempt(webhook, next);
    else if (!moved) await this.pause(TICK_MS);
    return scanned;
  }

  /** One attempt of one event, recorded; after a failure, the backoff's wait. */
  private async attempt(webhook: WebhookRecord, event: RecordedEvent): Promise<void> {
    const { settings, store, projector, log } = this.options;
    const attempt = webhook.failures + 1;
    const outcome = await this.post(webhook, event);
    // Cut short by a stop: not an attempt the receiver can be blamed for; made again after a restart.
    if (this.stopping.signal.aborted && outcome.status_code === null) return;
    const delivered = outcome.status_code !== null && outcome.status_code >= 200 && outcome.status_code < 300;
    const paused = !delivered && attempt >= settings.maxAttempts;
    const base = { institution_id: webhook.institution_id, occurred_at: formatTimestamp(Date.now() * 1000), webhook_id: webhook.id };
    const attempted: EventData<'WebhookAttempted'> = {
      ...base,
      event_id: event.id,
      event_position: { commit: event.position.commit.toString(), prepare: event.position.prepare.toString() },
      attempt,
      ...outcome,
    };
    const events = [
      { id: randomUUID(), type: 'WebhookAttempted', data: attempted },
      ...(paused ? [{ id: randomUUID(), type: 'WebhookPaused', data: { ...base, reason: `${attempt} attempts of event ${event.id} failed` } }] : []),
    ];
    const { position } = await store.append(webhookStream(webhook.id), events);
    // The read model shows it (the next attempt reads the cursor and failures from there), unless the server stops first.
    await Promise.race([projector.waitFor(position), this.stopped]);
    if (paused) log?.warn({ webhook_id: webhook.id, event_id: event.id, attempts: attempt }, 'webhook paused: its last attempt failed');
    else if (!delivered) await this.pause(backoffMs(attempt, settings.retryBaseMs));
  }

  /** POST the event, signed with the webhook's secret. */
  private async post(webhook: WebhookRecord, event: RecordedEvent): Promise<AttemptOutcome> {
    let secret: string;
    try {
      secret = this.options.secrets.open(webhook.secret, webhook.id);
    } catch (error) {
      if (!(error instanceof UnreadableSecretError)) throw error;
      return { status_code: null, error: error.message, duration_ms: 0 };
    }
    const data = event.data as { occurred_at: string };
    const delivery = signDelivery(secret, event.id, { type: event.type, timestamp: data.occurred_at, data: event.data }, new Date());
    return send(webhook.url, delivery, { guard: this.guard, timeoutMs: this.options.settings.timeoutMs, signal: this.stopping.signal });
  }
}
