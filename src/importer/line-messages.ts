/** What an import and its worker threads (line-worker.ts) send each other (structured clones). */
import type { MessagePort } from 'node:worker_threads';
import type { Shapes } from '../eventstore/packed-data.js';
import type { ImportProblem, LineResult } from './line-check.js';
import type { Effects, EntityKind, EventFacts, Ref, ReferenceProblem } from './references.js';

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
 * JSON (`json`, see WiredBatch), with the packed data of the checked lines one after another in `packed` (transferred,
 * not copied): a message of a string and a buffer. The results
 * as objects were a dozen objects a line to copy: this thread, which the workers then waited for, spent 5.2 of its
 * 19 s at 1.77M lines in native code its profile does not name (the copies, as I read it). As JSON of objects, a line
 * took 1.5–1.9 µs to parse; as JSON of arrays, 0.7–0.9 µs.
 */
export interface LineBatch {
  readonly batch: number;
  /** Lines that begin in its block (blank ones included); its results number them from 1. */
  readonly lines: number;
  /** JSON of the batch's results (a WiredBatch). */
  readonly json: string;
  /** The packed data of its checked lines, in order (each line's length in its wired result). */
  readonly packed: Uint8Array;
}

/** A reference as an array: [field, kind, id], the field and kind as numbers into the batch's strings. */
type WiredRef = [number, number, string];
/**
 * A refused line: [line, problems]. A checked line: [line, id or 0, raw or 0, type, institution, creates or 0, refs,
 * ends or 0, problems, key or 0, stream, data] where type and institution are numbers into the batch's strings, and
 * data is the length of its packed data or, not packed, its JSON.
 */
type Wired =
  | [number, readonly ImportProblem[]]
  | [number, string | 0, string | 0, number, number, WiredRef | 0, WiredRef[], WiredRef | 0, readonly ReferenceProblem[], EventFacts['key'] | 0, string, number | string];

/**
 * A batch's results, and the strings they repeat (events' types and institutions, references' fields and kinds), each
 * once: the results give them as numbers into `strings`. A line's JSON held some nine strings, six of them repeated
 * from line to line, and this thread made each one again (the JSON of 300,000 lines' results, in batches of 2,500,
 * best of five: 2.11 µs a line to parse and make into results as plain arrays, 1.23 µs so; 303 bytes a line against 208).
 */
type WiredBatch = [strings: string[], results: Wired[]];

/** Results as a worker sends them (`add` each, then `json()`). */
export class BatchWire {
  private strings: string[] = [];
  private codes = new Map<string, number>();
  private wired: Wired[] = [];

  private code(text: string): number {
    let code = this.codes.get(text);
    if (code === undefined) {
      code = this.strings.push(text) - 1;
      this.codes.set(text, code);
    }
    return code;
  }

  private ref(ref: Ref): WiredRef {
    return [this.code(ref.field), this.code(ref.kind), ref.id];
  }

  /** A result as an array (see Wired): a checked line's packed data apart, its length said. */
  add(result: LineResult): void {
    if (!('facts' in result)) {
      this.wired.push([result.line, result.problems]);
      return;
    }
    const { type, institution, effects, problems, key } = result.facts;
    const data = typeof result.data === 'string' ? result.data : result.data.length;
    const { creates, refs, ends } = effects;
    this.wired.push([
      result.line,
      result.id ?? 0,
      result.raw ?? 0,
      this.code(type),
      this.code(institution),
      creates ? this.ref(creates) : 0,
      refs.map((r) => this.ref(r)),
      ends ? this.ref(ends) : 0,
      problems,
      key ?? 0,
      result.stream,
      data,
    ]);
  }

  /** The JSON of the results added since the last call (a WiredBatch); the wire is then empty again. */
  json(): string {
    const json = JSON.stringify([this.strings, this.wired] satisfies WiredBatch);
    this.strings = [];
    this.codes = new Map();
    this.wired = [];
    return json;
  }
}

/** A batch's results again, its lines numbered in the file: the first after `before` lines. */
export function resultsOf(batch: LineBatch, before: number): LineResult[] {
  const [strings, wired] = JSON.parse(batch.json) as WiredBatch;
  const unwireRef = ([field, kind, id]: WiredRef): Ref => ({ field: strings[field]!, kind: strings[kind] as EntityKind, id });
  /** Where the next packed data begins in `batch.packed`. */
  let at = 0;
  const results = new Array<LineResult>(wired.length);
  for (let i = 0; i < wired.length; i++) {
    const w = wired[i]!;
    if (w.length === 2) {
      results[i] = { line: w[0] + before, problems: w[1].map((problem) => ({ ...problem, line: problem.line + before })) };
      continue;
    }
    const [line, id, raw, typeCode, institution, creates, refs, ends, problems, key, stream, packed] = w;
    const type = strings[typeCode] as EventFacts['type'];
    const effects: Effects = { refs: refs.map(unwireRef), creates: creates === 0 ? undefined : unwireRef(creates), ends: ends === 0 ? undefined : unwireRef(ends) };
    const facts: EventFacts = { type, institution: strings[institution]!, effects, problems, key: key === 0 ? undefined : key };
    const data = typeof packed === 'string' ? packed : batch.packed.subarray(at, (at += packed));
    results[i] = { line: line + before, id: id === 0 ? undefined : id, raw: raw === 0 ? undefined : raw, facts, stream, type, data };
  }
  return results;
}

/** Sent by a worker once it has sent all its batches. */
export interface LinesEnd {
  readonly end: true;
}
