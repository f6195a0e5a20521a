/**
 * An import's worker thread (see line-workers.ts): reads the whole file,
 * checks the lines of its own batches (every `workers`-th, from its
 * `index`), and sends each batch's results as it is done, at most `ahead`
 * batches before the parent has taken them.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { checkLine } from './line-check.js';
import { type LineBatch, type LineTask, type LinesEnd, wire } from './line-messages.js';
import { fileLines } from './lines.js';

const { file, index, workers, batchLines, ahead } = workerData as LineTask;
let sent = 0;
let taken = 0;
let wake: (() => void) | undefined;
parentPort!.on('message', () => {
  taken++;
  wake?.();
  wake = undefined;
});

/** The results of a batch's lines (wired), and the bodies of the checked ones. */
let results: ReturnType<typeof wire>[] = [];
let bodies: string[] = [];

async function send(batch: number): Promise<void> {
  while (sent - taken >= ahead) await new Promise<void>((resolve) => (wake = resolve));
  sent++;
  parentPort!.postMessage({ batch, json: JSON.stringify(results), bodies } satisfies LineBatch);
  results = [];
  bodies = [];
}

let line = 0;
let batch = 0;
for (const row of fileLines(file)) {
  line++;
  const mine = batch % workers === index;
  if (mine) {
    const result = checkLine(row, line);
    if (result !== undefined) {
      results.push(wire(result));
      if ('body' in result) bodies.push(result.body);
    }
  }
  if (line % batchLines === 0) {
    if (mine) await send(batch);
    batch++;
  }
}
if (line % batchLines !== 0 && batch % workers === index) await send(batch);
parentPort!.postMessage({ end: true } satisfies LinesEnd);
