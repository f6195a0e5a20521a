/**
 * The lines of a big import file checked on worker threads: each reads
 * every `workers`-th block of the file and checks the lines that begin in it
 * (parsing, schemas, and the facts and JSON of their events: most of an
 * import's work before its appends), while this thread takes the results in
 * file order and checks them against the log (ids, references), which needs
 * all that came before. A worker runs at most a few batches ahead of this
 * thread.
 */
import { statSync } from 'node:fs';
import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';
import { type LearningPacker, plainShapes, type Shapes } from '../eventstore/packed-data.js';
import type { LineResult } from './line-check.js';
import { type LineBatch, type LinesEnd, type LineTask, resultsOf } from './line-messages.js';

/**
 * Bytes of the file a batch covers: a message per about 2,500 lines of the benchmark's files. Each worker read the
 * whole file and checked every `workers`-th 2,000 lines: at 1.77M lines, 1.8 s of each worker's 16 s in a CPU profile
 * went to reading and decoding lines the others checked.
 */
const BLOCK_BYTES = 2 ** 20;
/** Batches a worker sends before this thread has taken them, at most. */
const AHEAD = 8;

/**
 * A worker's old generation, in MB: it holds a batch at a time and the schemas. Capped, the process's resident memory
 * while the lines are checked peaked at 592–605 MB (two runs, 1.77M lines) against 671 MB uncapped (one run). The
 * import's peak comes later, in its appends and their stream entries, either way.
 */
const WORKER_OLD_GENERATION_MB = 128;
/** A worker's young generation, in MB (three semi-spaces of 32 MB): each line's objects die young (see cli/import-thread.ts). */
const WORKER_YOUNG_GENERATION_MB = 96;

/** A worker and the messages it sent that this thread has not taken yet. */
class LineWorker {
  private readonly worker: Worker;
  /** Where the shapes the learning packer learns go. */
  private readonly shapes: MessagePort;
  private readonly queue: (LineBatch | LinesEnd)[] = [];
  private waiting: (() => void) | undefined;
  private failure: unknown;

  constructor(task: Omit<LineTask, 'shapesPort'>) {
    const { port1, port2 } = new MessageChannel();
    this.shapes = port1;
    this.worker = new Worker(new URL('./line-worker.js', import.meta.url), {
      workerData: { ...task, shapesPort: port2 } satisfies LineTask,
      transferList: [port2],
      resourceLimits: { maxOldGenerationSizeMb: WORKER_OLD_GENERATION_MB, maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
    });
    this.worker.on('message', (message: LineBatch | LinesEnd) => this.put(message));
    this.worker.once('error', (error) => this.fail(error));
    this.worker.once('exit', (code) => this.fail(new Error(`an import's worker thread exited with code ${code} before it was done`)));
  }

  private put(message: LineBatch | LinesEnd): void {
    this.queue.push(message);
    this.wake();
  }

  private fail(error: unknown): void {
    this.failure ??= error;
    this.wake();
  }

  private wake(): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.();
  }

  /** Its next message, taken (the worker may send one more batch). */
  async next(): Promise<LineBatch | LinesEnd> {
    for (;;) {
      const message = this.queue.shift();
      if (message !== undefined) {
        if ('batch' in message) this.worker.postMessage('taken');
        return message;
      }
      // An exit after the last message is no failure: every message came before it.
      if (this.failure !== undefined) throw this.failure;
      await new Promise<void>((resolve) => (this.waiting = resolve));
    }
  }

  /** Pack data of these shapes from its next batch on. */
  know(shapes: Shapes): void {
    this.shapes.postMessage(shapes);
  }

  stop(): Promise<number> {
    this.shapes.close();
    return this.worker.terminate();
  }
}

/**
 * The results of the file's lines, a batch at a time in file order, checked on `workers` threads; `onLines` is
 * told how many lines have been read after each batch, the share of the file they were read from, and how many
 * lines it holds at that rate. The workers pack data over the shapes `packer` knows; once the caller has taken a
 * batch (and packed what they could not), they are told of those `packer` has learned.
 */
export async function* checkedLineBatches(
  file: string,
  workers: number,
  packer: LearningPacker,
  onLines?: (lines: number, estimate: number, share: number) => void,
  blockBytes = BLOCK_BYTES,
): AsyncGenerator<readonly LineResult[]> {
  const { size } = statSync(file);
  packer.learned();
  const shapes = plainShapes(packer.shapes);
  const pool = Array.from({ length: workers }, (_, index) => new LineWorker({ file, index, workers, blockBytes, ahead: AHEAD, shapes }));
  let lines = 0;
  try {
    // Batch k comes from worker k mod workers. The first worker with no batch k has ended: no batch k exists, nor any after.
    for (let k = 0; ; k++) {
      const message = await pool[k % workers]!.next();
      if (!('batch' in message)) return;
      if (message.batch !== k) throw new Error(`an import's worker thread sent batch ${message.batch} where ${k} was due`);
      const results = resultsOf(message, lines);
      lines += message.lines;
      const share = Math.min(size, (k + 1) * blockBytes) / size;
      onLines?.(lines, Math.round(lines / share), share);
      yield results;
      if (packer.learned()) {
        const learned = plainShapes(packer.shapes);
        for (const worker of pool) worker.know(learned);
      }
    }
  } finally {
    await Promise.all(pool.map((worker) => worker.stop()));
  }
}
