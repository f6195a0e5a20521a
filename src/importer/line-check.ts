/**
 * One line of an import file, checked on its own: parsed, its schema
 * checked, and what the check against the log needs of its event made
 * (its facts, and its JSON as the spool keeps it). No state: the same on
 * this thread and on an import's worker threads (line-workers.ts).
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
  /** The spooled event's JSON but its id: `{"stream":…,"type":…,"data":…}` (see spooledJson). */
  readonly body: string;
}

export type LineResult = RefusedLine | CheckedLine;

const lineSchema = z.strictObject({ type: z.string(), data: z.unknown(), id: id.optional() });

const fieldOf = (path: readonly PropertyKey[]) => path.map(String).join('.');

/** The line numbered `line` (its text untrimmed), checked; undefined for a blank line. */
export function checkLine(row: string, line: number): LineResult | undefined {
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
  return checkedLine(line, envelope.data.id, envelope.data.id === undefined ? raw : undefined, event);
}

/** A line's event, already parsed and checked, as checkLine gives it. */
export function checkedLine(line: number, eventId: string | undefined, raw: string | undefined, event: DomainEvent): CheckedLine {
  return { line, id: eventId, raw, facts: factsOf(event), body: JSON.stringify({ stream: streamOf(event), type: event.type, data: event.data }) };
}

/** The spooled event (stream, id, type, data) of a checked line, as JSON, with its id. */
export function spooledJson(body: string, eventId: string): string {
  return `{"id":${JSON.stringify(eventId)},${body.slice(1)}`;
}
