/**
 * An import's worker thread (see line-workers.ts): reads the blocks of the
 * file that are its own (every `workers`-th, from its `index`), checks the
 * lines that begin in each, and sends each block's results as it is done,
 * at most `ahead` blocks before the parent has taken them.
 */
import { closeSync, fstatSync, openSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { checkLine } from './line-check.js';
import { type LineBatch, type LineTask, type LinesEnd, wire } from './line-messages.js';
import { blockLines } from './lines.js';

const { file, index, workers, blockBytes, ahead } = workerData as LineTask;
let sent = 0;
let taken = 0;
let wake: (() => void) | undefined;
parentPort!.on('message', () => {
  taken++;
  wake?.();
  wake = undefined;
});

const fd = openSync(file, 'r');
const { size } = fstatSync(fd);
for (let batch = index; batch * blockBytes < size; batch += workers) {
  const rows = blockLines(fd, batch * blockBytes, (batch + 1) * blockBytes, size);
  const results: ReturnType<typeof wire>[] = [];
  const bodies: string[] = [];
  // Line numbers from 1 in the block: the parent, which knows how many lines came before it, makes them the file's.
  for (let k = 0; k < rows.length; k++) {
    const result = checkLine(rows[k]!, k + 1);
    if (result === undefined) continue;
    results.push(wire(result));
    if ('body' in result) bodies.push(result.body);
  }
  while (sent - taken >= ahead) await new Promise<void>((resolve) => (wake = resolve));
  sent++;
  parentPort!.postMessage({ batch, lines: rows.length, json: JSON.stringify(results), bodies } satisfies LineBatch);
}
closeSync(fd);
parentPort!.postMessage({ end: true } satisfies LinesEnd);
