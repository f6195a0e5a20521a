/**
 * One delivery attempt over HTTP(S): node's own client, with the address
 * guard as the socket's lookup (and a literal address checked before
 * connecting), no redirects followed (a 3xx is a failed attempt), the
 * whole exchange bounded by a timeout, and the answer's body read and
 * dropped (up to a bound). Never throws: every outcome is an attempt to
 * record.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressGuard } from './address-guard.js';
import { literalAddress } from './address-guard.js';
import type { SignedDelivery } from './signing.js';

export interface AttemptOutcome {
  /** null: no HTTP answer (a network error, a timeout, a refused address). */
  readonly status_code: number | null;
  /** Why the attempt failed (null on a 2xx). */
  readonly error: string | null;
  readonly duration_ms: number;
}

/** An answer's body is read up to this many bytes, then the connection is dropped. */
const MAX_ANSWER_BYTES = 64 * 1024;

export interface SendOptions {
  readonly guard: AddressGuard;
  readonly timeoutMs: number;
  /** Aborts the attempt (shutdown). */
  readonly signal: AbortSignal;
}

export async function send(url: string, delivery: SignedDelivery, { guard, timeoutMs, signal }: SendOptions): Promise<AttemptOutcome> {
  const started = performance.now();
  const done = (status_code: number | null, error: string | null): AttemptOutcome => ({
    status_code,
    error,
    duration_ms: Math.round(performance.now() - started),
  });
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return done(null, 'invalid URL');
  }
  const literal = literalAddress(target.hostname);
  const refused = literal === undefined ? undefined : guard.refusal(literal);
  if (refused !== undefined) return done(null, `refused: ${refused}`);
  const timeout = AbortSignal.timeout(timeoutMs);
  const both = AbortSignal.any([timeout, signal]);
  const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
  try {
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        target,
        {
          method: 'POST',
          headers: { ...delivery.headers, 'content-length': String(Buffer.byteLength(delivery.body)), 'user-agent': 'volunteer-management-api-webhooks' },
          lookup: guard.lookup,
          signal: both,
          agent: false,
        },
        (res: IncomingMessage) => {
          let read = 0;
          res.on('data', (chunk: Buffer) => {
            read += chunk.length;
            if (read > MAX_ANSWER_BYTES) res.destroy();
          });
          res.on('end', () => resolve(res.statusCode ?? 0));
          res.on('close', () => resolve(res.statusCode ?? 0));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(delivery.body);
    });
    return done(status, status >= 200 && status < 300 ? null : `HTTP ${status}`);
  } catch (error) {
    if (timeout.aborted) return done(null, `timed out after ${timeoutMs} ms`);
    if (signal.aborted) return done(null, 'aborted: the server is stopping');
    const e = error as NodeJS.ErrnoException;
    return done(null, e.code === 'EWEBHOOKREFUSED' ? e.message : `${e.code ?? 'error'}: ${e.message}`);
  }
}
