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

/** The request's URL on another page: every parameter kept as sent, page and limit replaced. */
function pageUrl(request: FastifyRequest, baseUrl: string | undefined, page: number, limit: number): string {
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
  return `${baseUrl ?? `${request.protocol}://${request.host}`}${path}?${query}page=${page}&limit=${limit}`;
}

const COMMA = 0x2c;
const CLOSE_BRACKET = 0x5d;
const CLOSE_BRACE = 0x7d;

/** The envelope in UTF-8 JSON, assembled around already serialized results in one buffer. */
export function envelope(
  request: FastifyRequest,
  baseUrl: string | undefined,
  paging: Paging,
  count: number,
  results: readonly Buffer[],
  allocate: (length: number) => Buffer,
): Buffer {
  const { page, limit } = paging;
  const next = page * limit < count ? JSON.stringify(pageUrl(request, baseUrl, page + 1, limit)) : 'null';
  const previous = page > 1 ? JSON.stringify(pageUrl(request, baseUrl, page - 1, limit)) : 'null';
  const head = `{"count":${count},"next":${next},"previous":${previous},"results":[`;
  // head, the results with a comma between each two, then `]}`
  let length = Buffer.byteLength(head) + Math.max(results.length - 1, 0) + 2;
  for (let i = 0; i < results.length; i++) length += results[i]!.length;
  const body = allocate(length);
  let at = body.write(head, 0, 'utf8');
  for (let i = 0; i < results.length; i++) {
    if (i > 0) body[at++] = COMMA;
    body.set(results[i]!, at);
    at += results[i]!.length;
  }
  body[at++] = CLOSE_BRACKET;
  body[at++] = CLOSE_BRACE;
  return body;
}
