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
function keyOf(raw: string): string {
  try {
    return decodeURIComponent(raw.replaceAll('+', ' '));
  } catch {
    return raw;
  }
}

/** Whether the pair at [start, end) of `url` is `page` or `limit` (with a value or none), as the server reads its name. */
function isPaging(url: string, start: number, end: number): boolean {
  let keyEnd = end;
  let escaped = false;
  for (let i = start; i < end; i++) {
    const c = url.charCodeAt(i);
    if (c === EQUALS) {
      keyEnd = i;
      break;
    }
    // (A `+` is a space: no name with one is page or limit.)
    if (c === PERCENT) escaped = true;
  }
  if (escaped) {
    const key = keyOf(url.slice(start, keyEnd));
    return key === 'page' || key === 'limit';
  }
  const length = keyEnd - start;
  return (length === 4 && url.startsWith('page', start)) || (length === 5 && url.startsWith('limit', start));
}

const EQUALS = 0x3d;
const PERCENT = 0x25;

/**
 * The request's URL as JSON text up to its page number, every parameter but
 * page and limit kept as sent: `"<base><path>?<kept>&page=`. Completed by
 * `${page}&limit=${limit}"`.
 */
function pageUrlPrefix(request: FastifyRequest, baseUrl: string | undefined): string {
  const { url } = request;
  const base = baseUrl ?? `${request.protocol}://${request.host}`;
  const q = url.indexOf('?');
  let kept = q === -1 ? `${url}?` : url.slice(0, q + 1);
  if (q !== -1) {
    for (let start = q + 1; start < url.length; ) {
      let end = url.indexOf('&', start);
      if (end === -1) end = url.length;
      if (end > start && !isPaging(url, start, end)) kept += `${url.slice(start, end)}&`;
      start = end + 1;
    }
  }
  const prefix = `${base}${kept}page=`;
  // JSON.stringify, but for the closing quote (most URLs need no escaping:
  // the kept part is made of the URL's characters, so testing it is enough).
  return NEEDS_ESCAPING.test(url) || NEEDS_ESCAPING.test(base) ? JSON.stringify(prefix).slice(0, -1) : `"${prefix}`;
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
