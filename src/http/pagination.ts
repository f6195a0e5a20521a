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

function pageUrl(request: FastifyRequest, baseUrl: string | undefined, page: number, limit: number): string {
  const q = request.url.indexOf('?');
  const path = q === -1 ? request.url : request.url.slice(0, q);
  const params = new URLSearchParams(q === -1 ? '' : request.url.slice(q + 1));
  params.delete('page');
  params.delete('limit');
  params.set('page', String(page));
  params.set('limit', String(limit));
  return `${baseUrl ?? `${request.protocol}://${request.host}`}${path}?${params.toString()}`;
}

const COMMA = Buffer.from(',');
const TAIL = Buffer.from(']}');

/** The envelope in UTF-8 JSON, assembled around already serialized results with one copy. */
export function envelope(
  request: FastifyRequest,
  baseUrl: string | undefined,
  paging: Paging,
  count: number,
  results: readonly Buffer[],
): Buffer {
  const { page, limit } = paging;
  const next = page * limit < count ? JSON.stringify(pageUrl(request, baseUrl, page + 1, limit)) : 'null';
  const previous = page > 1 ? JSON.stringify(pageUrl(request, baseUrl, page - 1, limit)) : 'null';
  const head = Buffer.from(`{"count":${count},"next":${next},"previous":${previous},"results":[`);
  const parts: Buffer[] = [head];
  let length = head.length + TAIL.length;
  for (let i = 0; i < results.length; i++) {
    if (i > 0) {
      parts.push(COMMA);
      length += 1;
    }
    parts.push(results[i]!);
    length += results[i]!.length;
  }
  parts.push(TAIL);
  return Buffer.concat(parts, length);
}
