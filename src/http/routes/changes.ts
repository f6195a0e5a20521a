/**
 * GET /api/changes/: a page of the key's institution's change feed after a
 * cursor (see readmodel/change-feed.ts).
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { limitReader, single } from '../../query/schema.js';
import { type ChangeFeed, decodeCursor, encodeCursor, type FeedPosition } from '../../readmodel/change-feed.js';
import { CHANGES_OPERATION } from '../contract/operations.js';
import { rejectOtherMethods } from '../errors.js';

const MAX_CHANGES = 1000;
const DEFAULT_CHANGES = 100;

const readers = {
  after: single('after', decodeCursor, () => 'Invalid cursor for after: pass a cursor or next_cursor this feed gave.'),
  limit: limitReader(MAX_CHANGES),
};

const documented = {
  type: 'object',
  properties: {
    after: { type: 'string', description: 'A cursor this feed gave (a result\'s cursor or next_cursor): the changes after it. Absent: from the beginning.' },
    limit: { type: 'integer', minimum: 1, maximum: MAX_CHANGES, default: DEFAULT_CHANGES, description: 'Changes per page.' },
  },
};

const query = z
  .custom<Record<string, unknown>>((v) => typeof v === 'object' && v !== null && !Array.isArray(v))
  .meta(documented)
  .transform((q, ctx): { after: FeedPosition | undefined; limit: number } => {
    const after = readers.after.schema.safeParse(q.after);
    const limit = readers.limit.schema.safeParse(q.limit);
    for (const parsed of [after, limit]) {
      if (!parsed.success) for (const issue of parsed.error.issues) ctx.addIssue({ code: 'custom', message: issue.message });
    }
    if (!after.success || !limit.success) return z.NEVER;
    return { after: after.data, limit: limit.data ?? DEFAULT_CHANGES };
  });

export async function changesRoutes(parent: FastifyInstance, { changes }: { changes: ChangeFeed }) {
  const app = parent.withTypeProvider<ZodTypeProvider>();
  app.get('/changes/', { schema: { querystring: query, ...CHANGES_OPERATION } }, async (request) => {
    const { after, limit } = request.query;
    const results = changes.page(request.institutionId, after, limit);
    const last = results[results.length - 1];
    return { results, next_cursor: last ? last.cursor : after ? encodeCursor(after) : null };
  });
  rejectOtherMethods(parent, '/changes/', ['GET']);
}
