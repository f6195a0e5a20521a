/**
 * One line of an import file, checked on its own: parsed, its schema
 * checked, and what the check against the log needs of its event made
 * (its facts, its stream, and its data packed as the log keeps it). No
 * state: the same on this thread and on an import's worker threads
 * (line-workers.ts), each packing with its own packer.
 */
import { z } from 'zod';
import { type DomainEvent, eventSchemas, id, isEventType, streamOf } from '../events/catalog.js';
import { type EventFacts, factsOf } from './references.js';

export interface ImportProblem {
  /** 1-based line number (0 for the file as a whole). */
  line: number;
  field: string;
  message: string;
}

/** A line whose schema is wrong: what is wrong with it. */
export interface RefusedLine {
  readonly line: number;
  readonly problems: readonly ImportProblem[];
}

/** A line whose event passed its schema. */
export interface CheckedLine {
  readonly line: number;
  /** Its id, when the line gives one (else the caller derives one from `raw`). */
  readonly id: string | undefined;
  /** The line's text, for a line without an id. */
  readonly raw: string | undefined;
  readonly facts: EventFacts;
  readonly stream: string;
  readonly type: DomainEvent['type'];
  /** The event's data packed (as `pack` gave it), or its JSON where `pack` gave nothing (a shape it does not know). */
  readonly data: Uint8Array | string;
}

/** An event's data packed (packed-data.ts), or undefined when this packer may not pack it. */
export type PackData = (data: unknown) => Uint8Array | undefined;

export type LineResult = RefusedLine | CheckedLine;

const lineSchema = z.strictObject({ type: z.string(), data: z.unknown(), id: id.optional() });

const fieldOf = (path: readonly PropertyKey[]) => path.map(String).join('.');

/** The line numbered `line` (its text untrimmed), checked; undefined for a blank line. */
export function checkLine(row: string, line: number, pack: PackData): LineResult | undefined {
  const raw = row.trim();
  if (raw === '') return undefined;
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return { line, problems: [{ line, field: '', message: 'not valid JSON' }] };
  }
  const envelope = lineSchema.safeParse(json);
  if (!envelope.success) {
    return { line, problems: envelope.error.issues.map((issue) => ({ line, field: fieldOf(issue.path), message: issue.message })) };
  }
  const { type, data } = envelope.data;
  if (!isEventType(type)) return { line, problems: [{ line, field: 'type', message: `unknown event type ${JSON.stringify(type)}` }] };
  const parsed = eventSchemas[type].safeParse(data);
  if (!parsed.success) {
    return { line, problems: parsed.error.issues.map((issue) => ({ line, field: fieldOf(['data', ...issue.path]), message: issue.message })) };
  }
  const event = { type, data: parsed.data } as DomainEvent;
  return checkedLine(line, envelope.data.id, envelope.data.id === undefined ? raw : undefined, event, pack);
}

/** A line's event, already parsed and checked, as checkLine gives it. */
export function checkedLine(line: number, eventId: string | undefined, raw: string | undefined, event: DomainEvent, pack: PackData): CheckedLine {
  const data = pack(event.data) ?? JSON.stringify(event.data);
  return { line, id: eventId, raw, facts: factsOf(event), stream: streamOf(event), type: event.type, data };
}
