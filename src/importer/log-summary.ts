/**
 * What an import learns of the log before it checks its file (every event id, every record's kind, institution and
 * state, every key issued, each stream's last revision), kept in a file of the DATA_DIR by each import that
 * succeeded, with the event it is good up to: the next import reads only the log after that event. Without it every
 * import read the whole log first: 13 s for a file of one event into a log of 1.77M.
 *
 * The file is a cache. It is used only when it was written by this version and the event it names is still in the
 * log at the same place with the same id (a log replaced by another is read whole again); anything else about it
 * (missing, truncated, of another version) and the log is read from its start, as before. It is written to a file
 * of its own, synced, then renamed over the last: a reader sees the old file or the new one, whole.
 *
 * Its tables are written as their slots are, so a summary loads with no hashing: about 20 bytes a slot, some
 * 200 MB at 1.77M events (as much as the import holds of them in memory).
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { z } from 'zod';
import { domainEvent } from '../events/catalog.js';
import { type EventStore, type Position, startOfLog } from '../eventstore/port.js';
import { version } from '../version.js';
import { EventIds } from './event-ids.js';
import { LogListing, savedListing } from './log-listing.js';
import { ReferenceDirectory } from './references.js';
import { StreamRevisions } from './stream-revisions.js';
import { type SummaryWrite } from './summary-file.js';
import { type SavedUuidTable, SLOT } from './uuid-table.js';

/** What the log holds as of an event: what an import checks its file against, and what the CLI lists. */
export interface LogSummary {
  readonly ids: EventIds;
  readonly directory: ReferenceDirectory;
  readonly revisions: StreamRevisions;
  readonly listing: LogListing;
}

/** The event a summary is good up to (included): where the log is read on from, and how it is known to be the same log. */
export interface SummaryAnchor {
  readonly position: Position;
  readonly stream: string;
  readonly revision: number;
  readonly id: string;
}

/** Bump when what a summary keeps, or what the import folds into it, changes. */
const FORMAT = 1;
const MAGIC = Buffer.from('VMLOGSUM', 'latin1');
/** The magic, the format, and the header's length in bytes. */
const PREAMBLE = MAGIC.length + 8;

const tableHeader = z.object({
  name: z.string(),
  capacity: z.number().int().positive(),
  taken: z.number().int().nonnegative(),
  others: z.array(z.tuple([z.string(), z.number().int().nonnegative()])),
});

const header = z.object({
  version: z.string(),
  anchor: z.object({ commit: z.string(), prepare: z.string(), stream: z.string(), revision: z.number().int().nonnegative(), id: z.string() }),
  institutions: z.array(z.string()),
  /** The keys issued are the listing's: the reference checks' ledger is made again from them. */
  listing: savedListing,
  /** In the order their slots follow the header: the file is whole when it ends with the last. */
  tables: z.array(tableHeader),
});
type Header = z.infer<typeof header>;

const ENTITIES = 'entities';
const IDS = 'ids';
const REVISIONS = 'revisions:';

/**
 * Write the summary of the log up to `anchor`. The event ids must all be in the log by now (`EventIds.allInLog`):
 * call it only once every event the import checked was appended. Failing to write leaves the last summary as it was.
 *
 * The file is written on a thread of its own (summary-writer.ts), while the import goes on to write the stream
 * entries it put off (or, its appends prepared, their last slices): some 200 MB written and synced, 0.67 s of the
 * import thread's time at 1.77M events, before the 3.55 s of those entries. The tables' slots are handed to that thread, not copied: `summary` must not be used
 * after. The promise settles once the file is written, or failed to be (never rejected: the file is a cache).
 */
export function saveSummary(file: string, summary: LogSummary, anchor: SummaryAnchor): Promise<boolean> {
  const directory = summary.directory.saved();
  const tables: [string, SavedUuidTable][] = [[IDS, summary.ids.allInLog()], [ENTITIES, directory.entities], ...summary.revisions.saved().map(([kind, t]): [string, SavedUuidTable] => [REVISIONS + kind, t])];
  const described: Header = {
    version: versionTag(),
    anchor: { commit: String(anchor.position.commit), prepare: String(anchor.position.prepare), stream: anchor.stream, revision: anchor.revision, id: anchor.id },
    institutions: [...directory.institutions],
    listing: summary.listing.saved(),
    tables: tables.map(([name, t]) => ({ name, capacity: t.capacity, taken: t.taken, others: t.others.map(([k, v]) => [k, v]) })),
  };
  const json = Buffer.from(JSON.stringify(described));
  const preamble = Buffer.alloc(PREAMBLE);
  MAGIC.copy(preamble);
  preamble.writeUInt32LE(FORMAT, MAGIC.length);
  preamble.writeUInt32LE(json.length, MAGIC.length + 4);
  const slots = tables.map(([, t]) => new Uint8Array(t.slots.buffer, t.slots.byteOffset, t.slots.byteLength));
  const write: SummaryWrite = { file, parts: [preamble, json, ...slots] };
  // The slots' memory is handed over, each once; the preamble and the header are copied (a small Buffer may be a
  // slice of memory other Buffers share).
  const transferList = [...new Set(slots.flatMap((s) => (s.buffer instanceof ArrayBuffer ? [s.buffer] : [])))];
  return new Promise<boolean>((resolve) => {
    try {
      const worker = new Worker(new URL('./summary-writer.js', import.meta.url), { workerData: write, transferList });
      worker.once('message', (written: boolean) => resolve(written));
      worker.once('error', () => resolve(false));
      worker.once('exit', () => resolve(false));
    } catch {
      // (No thread to write it: the last summary stays as it was.)
      resolve(false);
    }
  });
}

/**
 * The summary in `file` and the event it is good up to, when it is this version's, whole, and that event is still in
 * the log where it was; else undefined (read the log from its start).
 */
export async function loadSummary(file: string, store: EventStore): Promise<(LogSummary & { anchor: SummaryAnchor }) | undefined> {
  const read = readSummary(file);
  if (read === undefined) return undefined;
  const { anchor } = read;
  const [event] = await store.readStream(anchor.stream, anchor.revision, 1);
  const same = event !== undefined && event.id === anchor.id && event.revision === anchor.revision && event.position.commit === anchor.position.commit && event.position.prepare === anchor.position.prepare;
  return same ? read : undefined;
}

/**
 * What the log holds: event ids for idempotency, records for references, each stream's last revision, the listing,
 * and the position and identity of the last event read (`readMore` told of each batch read). With a summary of the
 * log (`summaryFile`), only the log after its anchor is read, and an event whose id the summary already has is one the
 * summary took in (the import that wrote it appended it): its stream's revision is taken, nothing else.
 */
export async function whatTheLogHolds(
  store: EventStore,
  options: { summaryFile?: string | undefined; onProgress?: ((progress: { phase: 'checking'; done: number }) => void) | undefined; readMore?: (n: number) => Promise<void> },
) {
  const { summaryFile, onProgress, readMore } = options;
  const summary = summaryFile === undefined ? undefined : await loadSummary(summaryFile, store);
  const directory = summary?.directory ?? new ReferenceDirectory();
  const ids = summary?.ids ?? new EventIds();
  const revisions = summary?.revisions ?? new StreamRevisions();
  const listing = summary?.listing ?? new LogListing();
  let last: SummaryAnchor | undefined = summary?.anchor;
  let read = 0;
  let head = last?.position ?? startOfLog;
  for (;;) {
    const batch = await store.readAll(head, 10_000);
    if (batch.length === 0) break;
    for (const e of batch) {
      const known = ids.inLog(e.id);
      revisions.set(e.stream, e.revision);
      if (known && summary !== undefined) continue;
      const event = domainEvent(e);
      if (event === undefined) continue;
      directory.record(event);
      listing.fold(event.type, event.data.institution_id, () => event.data);
    }
    const end = batch[batch.length - 1]!;
    head = end.position;
    last = { position: end.position, stream: end.stream, revision: end.revision, id: end.id };
    await readMore?.(batch.length);
    read += batch.length;
    onProgress?.({ phase: 'checking', done: read });
  }
  return { ids, directory, revisions, listing, head, last, summarized: summary?.anchor, read };
}

function readSummary(file: string): (LogSummary & { anchor: SummaryAnchor }) | undefined {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return undefined;
  }
  try {
    const size = fstatSync(fd).size;
    const preamble = Buffer.alloc(PREAMBLE);
    if (size < PREAMBLE || readSync(fd, preamble, 0, PREAMBLE, 0) !== PREAMBLE || !preamble.subarray(0, MAGIC.length).equals(MAGIC)) return undefined;
    if (preamble.readUInt32LE(MAGIC.length) !== FORMAT) return undefined;
    const length = preamble.readUInt32LE(MAGIC.length + 4);
    if (PREAMBLE + length > size) return undefined;
    const json = Buffer.alloc(length);
    if (readSync(fd, json, 0, length, PREAMBLE) !== length) return undefined;
    const parsed = header.safeParse(JSON.parse(json.toString('utf8')));
    if (!parsed.success) return undefined;
    const h = parsed.data;
    const slotBytes = h.tables.reduce((sum, t) => sum + t.capacity * SLOT * 4, 0);
    if (h.version !== versionTag() || PREAMBLE + length + slotBytes !== size) return undefined;
    let at = PREAMBLE + length;
    const tables = new Map<string, SavedUuidTable>();
    for (const t of h.tables) {
      const slots = new Uint32Array(t.capacity * SLOT);
      const bytes = new Uint8Array(slots.buffer);
      for (let done = 0; done < bytes.length; ) {
        const n = readSync(fd, bytes, done, bytes.length - done, at + done);
        if (n === 0) return undefined;
        done += n;
      }
      at += bytes.length;
      tables.set(t.name, { capacity: t.capacity, taken: t.taken, others: t.others, slots });
    }
    const ids = tables.get(IDS);
    const entities = tables.get(ENTITIES);
    if (ids === undefined || entities === undefined) return undefined;
    const revisions = [...tables].filter(([name]) => name.startsWith(REVISIONS)).map(([name, t]): [string, SavedUuidTable] => [name.slice(REVISIONS.length), t]);
    const a = h.anchor;
    return {
      ids: EventIds.restored(ids),
      directory: new ReferenceDirectory({ entities, institutions: h.institutions }, h.listing.keys.map((k) => ({ key_id: k.keyId, key_sha256: k.sha256 }))),
      revisions: StreamRevisions.restored(revisions),
      listing: new LogListing(h.listing),
      anchor: { position: { commit: BigInt(a.commit), prepare: BigInt(a.prepare) }, stream: a.stream, revision: a.revision, id: a.id },
    };
  } catch {
    // Not a summary after all (a table whose slots do not fit its capacity, a position that is not a number…).
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** The format and the version of the service that wrote it: what an import folds into a summary may change with either. */
function versionTag(): string {
  return `${FORMAT}/${version()}`;
}
