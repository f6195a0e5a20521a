/**
 * An import's appends prepared on a thread of its own (append-preparer.ts), for an import alone with the embedded
 * log: what that thread hands on, one message at a time, in order.
 */
import { Worker } from 'node:worker_threads';
import type { PreparedEntries, PreparedEvents } from '../eventstore/port.js';

export interface PreparerJob {
  /** The spool's file, and the first of its events to prepare. */
  readonly file: string;
  readonly from: number;
  /** The log's position the first will take. */
  readonly firstPosition: number;
  /** The record id of the stored event (stored-event.ts). */
  readonly envelope: number;
  /** Events a chunk, and chunks made ahead of the import's thread at most. */
  readonly chunk: number;
  readonly ahead: number;
  /** Events whose stream entries are handed on together, at least (all at the end), in slices of `slice`. */
  readonly indexEvery: number;
  readonly slice: number;
}

/** A chunk's events, and the last of them (the summary of the log is anchored on it). */
export interface PreparedChunk extends PreparedEvents {
  readonly kind: 'chunk';
  readonly last: { readonly stream: string; readonly id: string; readonly revision: number };
}

export type PreparerMessage =
  | PreparedChunk
  | ({ readonly kind: 'entries' } & PreparedEntries)
  /** The event `at` (in the spool) and those after it cannot be prepared: the import appends them its other way. */
  | { readonly kind: 'unfit'; readonly at: number }
  | { readonly kind: 'end' };

export class PreparedAppends {
  private readonly worker: Worker;
  private readonly messages: PreparerMessage[] = [];
  private waiting: { resolve: (message: PreparerMessage) => void; reject: (error: Error) => void } | undefined;
  private failure: Error | undefined;
  private done = false;

  constructor(job: PreparerJob) {
    this.worker = new Worker(new URL('./append-preparer.js', import.meta.url), { workerData: job });
    this.worker.on('message', (message: PreparerMessage) => {
      if (message.kind === 'end' || message.kind === 'unfit') this.done = true;
      const waiting = this.waiting;
      this.waiting = undefined;
      if (waiting) waiting.resolve(message);
      else this.messages.push(message);
    });
    const fail = (error: Error) => {
      this.failure ??= error;
      const waiting = this.waiting;
      this.waiting = undefined;
      waiting?.reject(this.failure);
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => {
      if (!this.done) fail(new Error(`the thread preparing the appends stopped (exit code ${code})`));
    });
  }

  /** The next message; rejects when the thread failed before its last. */
  next(): Promise<PreparerMessage> {
    const message = this.messages.shift();
    if (message !== undefined) return Promise.resolve(message);
    if (this.failure !== undefined) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => (this.waiting = { resolve, reject }));
  }

  /** A chunk was taken: one more may be made. */
  taken(): void {
    this.worker.postMessage(null);
  }

  async stop(): Promise<void> {
    this.done = true;
    await this.worker.terminate();
  }
}
