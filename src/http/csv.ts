/**
 * CSV answers of lists and searches: `format=csv`, or an Accept header that
 * prefers `text/csv`. The page's records, each a row: nested objects
 * flattened to dotted columns (`opportunity.category.title`), arrays as JSON
 * text, null as an empty field; the columns are every field any record of
 * the page has, in the order first met. RFC 4180 quoting by csv-stringify.
 * The envelope's count and links go to headers: `X-Total-Count` and `Link`
 * (`rel="next"`, `rel="prev"`).
 */
import { stringify } from 'csv-stringify/sync';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Format } from '../query/schema.js';

const CSV = 'text/csv';
const JSON_TYPE = 'application/json';

/** The format asked for: `format=` if sent, else the first of JSON and CSV the Accept header prefers (JSON when it names neither). */
export function formatOf(request: FastifyRequest, asked: Format | undefined): Format {
  if (asked !== undefined) return asked;
  const accept = request.headers.accept;
  if (accept === undefined || !accept.includes(CSV)) return 'json';
  let best: { format: Format; q: number } = { format: 'json', q: -1 };
  for (const part of accept.split(',')) {
    const [type, ...params] = part.trim().toLowerCase().split(';');
    const q = Number(params.map((p) => p.trim()).find((p) => p.startsWith('q='))?.slice(2) ?? '1');
    const format: Format | undefined = type === CSV ? 'csv' : type === JSON_TYPE || type === 'application/*' || type === '*/*' ? 'json' : undefined;
    // Ties go to the type named first.
    if (format !== undefined && Number.isFinite(q) && q > best.q) best = { format, q };
  }
  return best.q > 0 ? best.format : 'json';
}

type Flat = Record<string, string | number | boolean>;

function flatten(value: unknown, prefix: string, into: Flat): void {
  if (value === null || value === undefined) {
    into[prefix] = '';
  } else if (Array.isArray(value)) {
    into[prefix] = JSON.stringify(value);
  } else if (typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) flatten(inner, prefix === '' ? key : `${prefix}.${key}`, into);
  } else {
    into[prefix] = value as string | number | boolean;
  }
}

interface Envelope {
  count: number;
  next: string | null;
  previous: string | null;
  results: unknown[];
}

/** Send the page (its JSON envelope) as CSV. */
export function sendCsv(reply: FastifyReply, json: Buffer): FastifyReply {
  const page = JSON.parse(json.toString('utf8')) as Envelope;
  const rows = page.results.map((record) => {
    const flat: Flat = {};
    flatten(record, '', flat);
    return flat;
  });
  const columns: string[] = [];
  const seen = new Set<string>();
  for (const row of rows) {
    for (const key of Object.keys(row)) {
      if (!seen.has(key)) {
        seen.add(key);
        columns.push(key);
      }
    }
  }
  const links = [page.next && `<${page.next}>; rel="next"`, page.previous && `<${page.previous}>; rel="prev"`].filter(Boolean);
  if (links.length > 0) reply.header('link', links.join(', '));
  reply.header('x-total-count', String(page.count));
  const body = columns.length === 0 ? '' : stringify(rows, { header: true, columns, cast: { boolean: (b) => String(b) }, record_delimiter: 'windows' });
  return reply.type('text/csv; charset=utf-8').send(body);
}
