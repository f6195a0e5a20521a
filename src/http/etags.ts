/**
 * Conditional GETs under /api/: a weak ETag made from the read model's epoch
 * (random per process: revisions count from the load, so a restart or another
 * replica gives other tags, never a stale match), the institution's revision
 * (moves on every change of any of its records), today's date (ages in
 * profiles) and a hash of the institution and the URL — never from the body —
 * so it changes whenever what the institution's data could show at that URL
 * changes. A request whose If-None-Match holds it is answered 304 before
 * anything is searched.
 */
import type { FastifyInstance } from 'fastify';
import type { ReadModel } from '../readmodel/model.js';
import { formatOf } from './csv.js';

/** FNV-1a of a string, as 8 hex digits. */
function hash(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, '0');
}

/** For the /api/ scope, after authentication (the tag is the institution's). */
export function conditionalGets(api: FastifyInstance, model: ReadModel): void {
  api.addHook('preHandler', (request, reply, done) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return done();
    // (No tag while searches show some records as they were before the revision: it would name the wrong answer.)
    if (model.stale(request.institutionId)) return done();
    const tag = `W/"${model.epoch.toString(36)}.${model.institutionRevision(request.institutionId).toString(36)}.${model.today().toString(36)}.${hash(`${request.institutionId} ${request.url} ${formatOf(request, undefined)}`)}"`;
    reply.header('etag', tag);
    const wanted = request.headers['if-none-match'];
    if (wanted !== undefined && wanted.split(',').some((t) => t.trim() === tag || t.trim() === '*')) {
      void reply.code(304).send();
      return;
    }
    done();
  });
}
