/**
 * Import of NDJSON event files: every line is parsed and validated (schema,
 * known type, references to records of the same institution) before
 * anything is appended; one bad line and nothing is appended. Lines whose
 * event is already in the log are skipped, so importing a file again
 * appends nothing.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { type DomainEvent, domainEvent, eventSchemas, id, isEventType, streamOf } from '../events/catalog.js';
import type { EventStore, StreamAppend } from '../eventstore/port.js';
import { fileLines } from './lines.js';
import { ReferenceDirectory } from './references.js';

export interface ImportProblem {
  /** 1-based line number (0 for the file as a whole). */
  line: number;
  field: string;
  message: string;
}

export class ImportError extends Error {
  constructor(
    readonly file: string,
    readonly problems: readonly ImportProblem[],
  ) {
    const shown = problems.slice(0, 20).map((p) => `  ${file}:${p.line}: ${p.field ? `${p.field}: ` : ''}${p.message}`);
    const more = problems.length > 20 ? [`  … and ${problems.length - 20} more`] : [];
    super([`${file}: ${problems.length} invalid line(s); nothing was imported`, ...shown, ...more].join('\n'));
    this.name = 'ImportError';
  }
}

/**
 * Appending a chunk of a valid file failed (a full disk, an unreachable
 * store): that chunk is not in the log (each is appended in one
 * transaction), the ones before it are; importing the file again appends
 * the rest.
 */
export class ImportAppendError extends Error {
  constructor(
    readonly file: string,
    readonly appended: number,
    readonly total: number,
    cause: unknown,
  ) {
    const problem = cause instanceof Error ? cause.message : String(cause);
    super(
      `${file}: appending to the log failed after ${appended} of ${total} events (${problem}); ` +
        `the log holds those ${appended} and nothing of the rest: importing the file again appends the rest`,
      { cause },
    );
    this.name = 'ImportAppendError';
  }
}

const lineSchema = z.strictObject({ type: z.string(), data: z.unknown(), id: id.optional() });

export interface ParsedLine {
  line: number;
  eventId: string;
  event: DomainEvent;
}

/**
 * A line without an id gets one derived from its text and how often the
 * same text came before in the file, so a re-import of the file (or of its
 * remainder after an interruption) appends nothing twice.
 */
function derivedId(text: string, occurrence: number): string {
  const h = createHash('sha256').update(`${occurrence}\n${text}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

const fieldOf = (path: readonly PropertyKey[]) => path.map(String).join('.');

/** Parse and validate the lines' schemas; references are checked later, against the log. */
function parseLines(rows: Iterable<string>): { lines: ParsedLine[]; problems: ImportProblem[] } {
  const lines: ParsedLine[] = [];
  const problems: ImportProblem[] = [];
  const seen = new Map<string, number>();
  /** How often this line's text came before, among lines without an id. */
  const occurrenceOf = (raw: string) => {
    const occurrence = seen.get(raw) ?? 0;
    seen.set(raw, occurrence + 1);
    return occurrence;
  };
  let line = 0;
  for (const row of rows) {
    line++;
    const raw = row.trim();
    if (raw === '') continue;
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      problems.push({ line, field: '', message: 'not valid JSON' });
      continue;
    }
    const envelope = lineSchema.safeParse(json);
    if (!envelope.success) {
      for (const issue of envelope.error.issues) problems.push({ line, field: fieldOf(issue.path), message: issue.message });
      continue;
    }
    const { type, data } = envelope.data;
    if (!isEventType(type)) {
      problems.push({ line, field: 'type', message: `unknown event type ${JSON.stringify(type)}` });
      continue;
    }
    const parsed = eventSchemas[type].safeParse(data);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        problems.push({ line, field: fieldOf(['data', ...issue.path]), message: issue.message });
      }
      continue;
    }
    const event = { type, data: parsed.data } as DomainEvent;
    lines.push({ line, eventId: envelope.data.id ?? derivedId(raw, occurrenceOf(raw)), event });
  }
  return { lines, problems };
}

export interface ImportResult {
  appended: number;
  skipped: number;
}

/** How far an import is: lines read and validated, the log read for references, or events appended (of `total`, when known). */
export interface ImportProgress {
  readonly phase: 'reading' | 'checking' | 'appending';
  readonly done: number;
  readonly total?: number;
}
export type OnImportProgress = (progress: ImportProgress) => void;

const CHUNK = 20_000;

/** Validate a whole file (given as text) against the log, then append it. Throws ImportError and appends nothing on any problem. */
export function importEvents(store: EventStore, file: string, text: string, onProgress?: OnImportProgress): Promise<ImportResult> {
  return importLines(store, file, text.split('\n'), onProgress);
}

/** importEvents for a file on disk, read line by line (any size), telling `onProgress` how far it is now and then. */
export function importFile(store: EventStore, file: string, onProgress?: OnImportProgress): Promise<ImportResult> {
  return importLines(store, file, counted(fileLines(file), onProgress), onProgress);
}

/** The rows, telling `onProgress` every 10,000 how many have been read. */
function* counted(rows: Iterable<string>, onProgress: OnImportProgress | undefined): Iterable<string> {
  let n = 0;
  for (const row of rows) {
    if (++n % 10_000 === 0) onProgress?.({ phase: 'reading', done: n });
    yield row;
  }
}

async function importLines(store: EventStore, file: string, rows: Iterable<string>, onProgress?: OnImportProgress): Promise<ImportResult> {
  const { lines, problems } = parseLines(rows);
  if (problems.length > 0) throw new ImportError(file, problems);
  return appendChecked(store, file, lines, onProgress);
}

/** Check parsed events against the log (references, idempotency), then append them all or none. */
export async function appendChecked(store: EventStore, file: string, lines: readonly ParsedLine[], onProgress?: OnImportProgress): Promise<ImportResult> {
  const problems: ImportProblem[] = [];

  // What the log already holds: ids for idempotency, records for references.
  const directory = new ReferenceDirectory();
  const known = new Set<string>();
  let from = { commit: -1n, prepare: -1n };
  for (;;) {
    const batch = await store.readAll(from, 10_000);
    if (batch.length === 0) break;
    for (const e of batch) {
      known.add(e.id);
      const event = domainEvent(e);
      if (event) directory.record(event);
    }
    from = batch[batch.length - 1]!.position;
    onProgress?.({ phase: 'checking', done: known.size });
  }

  const fresh: ParsedLine[] = [];
  for (const parsed of lines) {
    if (known.has(parsed.eventId)) continue;
    known.add(parsed.eventId);
    for (const p of directory.check(parsed.event)) {
      problems.push({ line: parsed.line, field: `data.${p.field}`, message: p.message });
    }
    fresh.push(parsed);
  }
  if (problems.length > 0) throw new ImportError(file, problems);

  for (let i = 0; i < fresh.length; i += CHUNK) {
    const appends: StreamAppend[] = fresh.slice(i, i + CHUNK).map(({ eventId, event }) => ({
      stream: streamOf(event),
      events: [{ id: eventId, type: event.type, data: event.data }],
    }));
    try {
      await store.appendMany(appends);
    } catch (error) {
      throw new ImportAppendError(file, i, fresh.length, error);
    }
    onProgress?.({ phase: 'appending', done: Math.min(i + CHUNK, fresh.length), total: fresh.length });
  }
  return { appended: fresh.length, skipped: lines.length - fresh.length };
}
