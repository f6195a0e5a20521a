/**
 * Test helpers for webhooks: a receiver on 127.0.0.1 that answers as told
 * (a status, a hang past the deliverer's timeout, a closed socket) and
 * keeps every request it got, and the API calls the webhook tests make.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { WebhookSettings } from '../src/webhooks/settings.js';
import { DEMO_KEY, type TestApp, until } from './helpers.js';

/** What the receiver does with a request: answer this status, never answer, or close the socket. */
export type Behavior = number | 'hang' | 'close';

export interface Received {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** What the receiver did with it. */
  readonly answered: Behavior;
}

export interface Receiver {
  readonly url: string;
  readonly port: number;
  readonly received: Received[];
  /** What the next requests get (the last one stays). */
  behave(...behaviors: Behavior[]): void;
  /** Resolves once `n` requests were received. */
  count(n: number, ms?: number): Promise<void>;
  close(): Promise<void>;
}

export async function receiver(): Promise<Receiver> {
  let plan: Behavior[] = [200];
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const answered = plan.length > 1 ? plan.shift()! : plan[0]!;
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), answered });
      if (answered === 'close') req.socket.destroy();
      else if (answered !== 'hang') res.writeHead(answered).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    received,
    behave: (...behaviors) => {
      plan = behaviors;
    },
    count: async (n, ms = 5000) => {
      await until(() => (received.length >= n ? true : undefined), ms);
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Verify a delivery's signature with the standardwebhooks package (throws if it does not verify); its payload. */
export function verified(secret: string, delivery: Received): { type: string; timestamp: string; data: Record<string, unknown> } {
  const headers = {
    'webhook-id': String(delivery.headers['webhook-id']),
    'webhook-timestamp': String(delivery.headers['webhook-timestamp']),
    'webhook-signature': String(delivery.headers['webhook-signature']),
  };
  return new Webhook(secret).verify(delivery.body, headers) as { type: string; timestamp: string; data: Record<string, unknown> };
}

/** Settings for tests: http and 127.0.0.1 allowed, quick retries and timeouts, secrets encrypted. */
export function testSettings(overrides: Partial<WebhookSettings> = {}): WebhookSettings {
  return {
    delivery: true,
    allowHttp: true,
    allowPrivateNetworks: true,
    retryBaseMs: 20,
    maxAttempts: 3,
    timeoutMs: 300,
    secretKey: randomBytes(32),
    ...overrides,
  };
}

export interface Answer {
  status: number;
  body: any;
}

/** A request with a key (the demo's by default), its answer parsed. */
export async function call(app: TestApp, method: 'GET' | 'POST' | 'DELETE' | 'PUT', url: string, body?: unknown, key: string | null = DEMO_KEY, headers: Record<string, string> = {}): Promise<Answer> {
  const raw = typeof body === 'string';
  const res = await app.server.inject({
    method,
    url,
    headers: { ...(key === null ? {} : { 'api-key': key }), ...(raw ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(body === undefined ? {} : { payload: raw ? body : (body as object) }),
  });
  return { status: res.statusCode, body: res.body === '' ? null : res.json() };
}

/** Create sites (one SiteCreated event each, in this order). */
export async function createSites(app: TestApp, ...titles: string[]): Promise<string[]> {
  const res = await call(app, 'POST', '/api/sites/bulk-create/', { sites: titles.map((title) => ({ title })) });
  if (res.status !== 201) throw new Error(`bulk-create: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.results.map((s: { id: string }) => s.id);
}

/** Subscribe; the answer's body (201 expected). */
export async function subscribe(app: TestApp, url: string, eventTypes?: string[]): Promise<{ id: string; secret: string; status: string }> {
  const res = await call(app, 'POST', '/api/webhooks/', eventTypes ? { url, event_types: eventTypes } : { url });
  if (res.status !== 201) throw new Error(`subscribe: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Every delivery attempt of a webhook, as the API lists them. */
export async function deliveries(app: TestApp, id: string, key: string = DEMO_KEY): Promise<Array<Record<string, unknown>>> {
  const res = await call(app, 'GET', `/api/webhooks/${id}/deliveries/?limit=100`, undefined, key);
  if (res.status !== 200) throw new Error(`deliveries: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.results;
}

/** Resolves once the webhook has `n` delivery attempts recorded. */
export async function attempts(app: TestApp, id: string, n: number, ms = 5000): Promise<Array<Record<string, unknown>>> {
  return until(async () => {
    const list = await deliveries(app, id);
    return list.length >= n ? list : undefined;
  }, ms);
}

/** Let the deliverer run a while (to see that nothing more comes). */
export const settle = (ms = 250) => new Promise((resolve) => setTimeout(resolve, ms));
