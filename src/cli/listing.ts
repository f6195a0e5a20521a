/** `vm-api keys list` and `vm-api institutions list`: the log's listing (log-listing.ts), as a table. */
import type { EventStore } from '../eventstore/port.js';
import type { LogListing } from '../importer/log-listing.js';
import { counter, RELEASE_EVERY } from '../importer/import.js';
import { saveSummary, whatTheLogHolds } from '../importer/log-summary.js';

export const listedResources = ['shifts', 'opportunities', 'categories', 'profiles', 'reservations', 'form-submissions', 'sequences', 'user-sequences', 'sites'];

/**
 * Events read past the summary (or with none) from which listLog writes a summary of the log: a log that was never
 * imported into (a server's own appends, or EventStoreDB's other writers) gets one too.
 */
const SUMMARIZE_FROM = 100_000;

/** The listing of the whole log: from its summary (`summaryFile`, see log-summary.ts) and the events after it, or from every event. */
export async function listLog(store: EventStore, summaryFile: string, summarizeFrom = SUMMARIZE_FROM): Promise<LogListing> {
  // The store is the command's own: the log's pages read are let go of as an import's are (a whole log read kept
  // them mapped: 1.3 GB at 1.77M events, against 0.6 GB).
  const readMore = counter(RELEASE_EVERY, async () => store.releaseReadPages?.());
  const { read, last, ...summary } = await whatTheLogHolds(store, { summaryFile, readMore });
  if (read >= summarizeFrom && last !== undefined) await saveSummary(summaryFile, summary, last);
  return summary.listing;
}

/** Rows as columns padded to their widest cell. */
export function table(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]!))).join('  ')).join('\n');
}
