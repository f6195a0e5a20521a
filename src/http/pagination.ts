/** The paginated envelope: count, absolute next/previous URLs, results. */
import type { FastifyRequest } from 'fastify';
import type { Paging } from '../query/schema.js';
import { HttpError } from './errors.js';

export function offsetOf({ page, limit }: Paging): number {
  return (page - 1) * limit;
}

/** 404 for a page past the last (page 1 of an empty result is fine). */
export function checkPage(paging: Paging, count: number): void {
  if (paging.page > 1 && offsetOf(paging) >= count) throw new HttpError(404, 'Invalid page.');
}

/** The name of a query-string pair as the server reads it (`+` is a space, %-escapes decoded). */
function keyOf(pair: string): string {
  const eq = pair.indexOf('=');
  const raw = eq === -1 ? pair : pair.slice(0, eq);
  if (!/[%+]/.test(raw)) return raw;
  try {
    return decodeURIComponent(raw.replaceAll('+', ' '));
  } catch {
    return raw;
  }
}

/**
 * The request's URL as JSON text up to its page number, every parameter but
 * page and limit kept as sent: `"<base><path>?<kept>&page=`. Completed by
 * `${page}&limit=${limit}"`.
 */
function pageUrlPrefix(request: FastifyRequest, baseUrl: string | undefined): string {
  const q = request.url.indexOf('?');
  const path = q === -1 ? request.url : request.url.slice(0, q);
  let query = '';
  if (q !== -1) {
    for (const pair of request.url.slice(q + 1).split('&')) {
      if (pair === '') continue;
      const key = keyOf(pair);
      if (key !== 'page' && key !== 'limit') query += `${pair}&`;
    }
  }
  const url = `${baseUrl ?? `${request.protocol}://${request.host}`}${path}?${query}page=`;
  // JSON.stringify, but for the closing quote (most URLs need no escaping).
  return NEEDS_ESCAPING.test(url) ? JSON.stringify(url).slice(0, -1) : `"${url}`;
}

const NEEDS_ESCAPING = /["\\\u0000-\u001f\u007f-\uffff]/;
/** Printable ASCII: one byte per character. */
const NOT_ASCII = /[^\u0020-\u007e]/;

const CLOSE_BRACKET = 0x5d;
const CLOSE_BRACE = 0x7d;

/**
 * The envelope in UTF-8 JSON, assembled in one buffer around the results,
 * already serialized: runs of row JSON, each row followed by a comma (the
 * last comma becomes the array's `]`).
 */
export function envelope(
  request: FastifyRequest,
  baseUrl: string | undefined,
  paging: Paging,
  count: number,
  runs: readonly Buffer[],
  allocate: (length: number) => Buffer,
): Buffer {
  const { page, limit } = paging;
  const hasNext = page * limit < count;
  const prefix = hasNext || page > 1 ? pageUrlPrefix(request, baseUrl) : '';
  const next = hasNext ? `${prefix}${page + 1}&limit=${limit}"` : 'null';
  const previous = page > 1 ? `${prefix}${page - 1}&limit=${limit}"` : 'null';
  const head = `{"count":${count},"next":${next},"previous":${previous},"results":[`;
  const ascii = !NOT_ASCII.test(head);
  // head, the runs (the last comma replaced by `]`, or a `]` alone), then `}`
  let length = (ascii ? head.length : Buffer.byteLength(head)) + (runs.length === 0 ? 2 : 1);
  for (let i = 0; i < runs.length; i++) length += runs[i]!.length;
  const body = allocate(length);
  let at = body.write(head, 0, ascii ? 'latin1' : 'utf8');
  for (let i = 0; i < runs.length; i++) {
    body.set(runs[i]!, at);
    at += runs[i]!.length;
  }
  if (runs.length === 0) at++;
  body[at - 1] = CLOSE_BRACKET;
  body[at] = CLOSE_BRACE;
  return body;
}
