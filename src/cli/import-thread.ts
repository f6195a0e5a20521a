/**
 * `vm-api import` runs on a thread of its own, so that its heap's young
 * generation can be sized for it (a process's main thread takes V8's flags
 * as given on the command line; a worker takes `resourceLimits`). An import
 * makes a few objects a line for every one of millions of lines, most dying
 * young: with V8's default semi-space of 16 MB they were collected in many
 * small pauses and the survivors copied again and again. This thread keeps
 * the terminal (progress, the line a file ends with) and the exit code;
 * the import thread does the work and tells it what happens.
 */
import { Worker } from 'node:worker_threads';
import type { Config } from '../config.js';
import type { Progress } from './progress.js';

/**
 * The import thread's young generation, in MB (three semi-spaces of 64 MB), its line workers' 96 (line-workers.ts).
 * An import of 1.77M events (the benchmark's skewed data, two cores), alternated with the import on the process's
 * main thread as before, three runs each: 18.6–20.6 s against 20.9–23.4 s, peak resident memory 1.00–1.03 GB against
 * 0.88–0.92 GB. Tried first with the whole process's flag (`--max-semi-space-size`): 32 MB gave 18.3–20.4 s, 64 MB
 * 17.7–18.7 s (1.00–1.02 GB), 128 MB no faster than 64 at 1.24 GB; the line workers' young generation alone (96 MB
 * against the default) made no difference beyond the runs' noise.
 */
export const IMPORT_YOUNG_GENERATION_MB = 192;

export interface ImportTask {
  readonly config: Config;
  readonly files: readonly string[];
  /** The summary of the log the import reads first and writes last. */
  readonly summaryFile: string;
}

/** What the import thread tells this one. */
export type ImportMessage =
  | { readonly kind: 'progress'; readonly file: string; readonly progress: Progress }
  | { readonly kind: 'imported'; readonly file: string; readonly appended: number; readonly skipped: number; readonly seconds: number }
  /** An operator's mistake or a refused file (its message is all there is to say: no stack). */
  | { readonly kind: 'refused'; readonly message: string };

export interface ImportListener {
  progress(file: string, progress: Progress): void;
  imported(file: string, appended: number, skipped: number, seconds: number): void;
}

/** An import refused as a whole or stopped on the way (its message says which, and what is in the log). */
export class ImportRefused extends Error {}

/** Run the import of `task.files` on its own thread; resolves when all are imported, rejects with ImportRefused or the thread's error. */
export function importOnThread(task: ImportTask, listener: ImportListener): Promise<void> {
  const worker = new Worker(new URL('./import-worker.js', import.meta.url), {
    workerData: task,
    resourceLimits: { maxYoungGenerationSizeMb: IMPORT_YOUNG_GENERATION_MB },
  });
  return new Promise<void>((resolve, reject) => {
    let refused: ImportRefused | undefined;
    worker.on('message', (message: ImportMessage) => {
      if (message.kind === 'progress') listener.progress(message.file, message.progress);
      else if (message.kind === 'imported') listener.imported(message.file, message.appended, message.skipped, message.seconds);
      else refused = new ImportRefused(message.message);
    });
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (refused !== undefined) reject(refused);
      else if (code === 0) resolve();
      else reject(new Error(`the import's thread exited with code ${code}`));
    });
  });
}
