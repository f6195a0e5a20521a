/** What an import and its worker threads (line-worker.ts) send each other (structured clones). */
import type { MessagePort } from 'node:worker_threads';
import type { Shapes } from '../eventstore/packed-data.js';
import type { ImportProblem, LineResult } from './line-check.js';
import type { EntityKind, EventFacts, Ref, ReferenceProblem } from './references.js';

export interface LineTask {
  readonly file: string;
  /** This worker, of `workers`: it checks batches index, index + workers, … */
  readonly index: number;
  readonly workers: number;
  /** Bytes of the file a batch covers: batch k holds the lines that begin in [k × blockBytes, (k + 1) × blockBytes). */
  readonly blockBytes: number;
  /** Batches a worker sends at most before the parent has taken them (each taken is said with a message). */
  readonly ahead: number;
  /** The shapes it packs data of (packed-data.ts: KnownShapesPacker), as the import's learning packer knew them. */
  readonly shapes: Shapes;
  /** Where the shapes that packer learns later come (a Shapes each time): the worker looks before each batch. */
  readonly shapesPort: MessagePort;
}

/**
 * Sent by a worker: the results of batch `batch` (the lines that begin in its block), blank lines left out, as
 * JSON of arrays (`wire`), with the packed data of the checked lines one after another in `packed` (transferred, not
 * copied): a message of a string and a buffer. The results
 * as objects were a dozen objects a line to copy: this thread, which the workers then waited for, spent 5.2 of its
 * 19 s at 1.77M lines in native code its profile does not name (the copies, as I read it). As JSON of objects, a line
 * took 1.5–1.9 µs to parse; as JSON of arrays, 0.7–0.9 µs.
 */
export interface LineBatch {
  readonly batch: number;
  /** Lines that begin in its block (blank ones included); its results number them from 1. */
  readonly lines: number;
  /** JSON of the results, each `wire`d. */
  readonly json: string;
  /** The packed data of its checked lines, in order (each line's length in its wired result). */
  readonly packed: Uint8Array;
}

/** A reference as an array: [field, kind, id]. */
type WiredRef = [string, EntityKind, string];
/**
 * A refused line: [line, problems]. A checked line: [line, id or 0, raw or 0, type, institution, creates or 0, refs,
 * ends or 0, problems, key or 0, stream, data] where data is the length of its packed data or, not packed, its JSON.
 */
type Wired =
  | [number, readonly ImportProblem[]]
  | [number, string | 0, string | 0, EventFacts['type'], string, WiredRef | 0, WiredRef[], WiredRef | 0, readonly ReferenceProblem[], EventFacts['key'] | 0, string, number | string];

const wireRef = (ref: Ref): WiredRef => [ref.field, ref.kind, ref.id];
const unwireRef = ([field, kind, id]: WiredRef): Ref => ({ field, kind, id });

/** A result as an array (see Wired): a checked line's packed data apart, its length said. */
export function wire(result: LineResult): Wired {
  if (!('facts' in result)) return [result.line, result.problems];
  const { type, institution, effects, problems, key } = result.facts;
  const data = typeof result.data === 'string' ? result.data : result.data.length;
  return [result.line, result.id ?? 0, result.raw ?? 0, type, institution, effects.creates ? wireRef(effects.creates) : 0, effects.refs.map(wireRef), effects.ends ? wireRef(effects.ends) : 0, problems, key ?? 0, result.stream, data];
}

/** A batch's results again, its lines numbered in the file: the first after `before` lines. */
export function resultsOf(batch: LineBatch, before: number): LineResult[] {
  const wired = JSON.parse(batch.json) as Wired[];
  /** Where the next packed data begins in `batch.packed`. */
  let at = 0;
  return wired.map((w): LineResult => {
    if (w.length === 2) return { line: w[0] + before, problems: w[1].map((problem) => ({ ...problem, line: problem.line + before })) };
    const [line, id, raw, type, institution, creates, refs, ends, problems, key, stream, packed] = w;
    const effects = { refs: refs.map(unwireRef), ...(creates === 0 ? {} : { creates: unwireRef(creates) }), ...(ends === 0 ? {} : { ends: unwireRef(ends) }) };
    const facts: EventFacts = key === 0 ? { type, institution, effects, problems } : { type, institution, effects, problems, key };
    const data = typeof packed === 'string' ? packed : batch.packed.subarray(at, (at += packed));
    return { line: line + before, id: id === 0 ? undefined : id, raw: raw === 0 ? undefined : raw, facts, stream, type, data };
  });
}

/** Sent by a worker once it has sent all its batches. */
export interface LinesEnd {
  readonly end: true;
}
