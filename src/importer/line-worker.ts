/**
 * An import's worker thread (see line-workers.ts): reads the blocks of the
 * file that are its own (every `workers`-th, from its `index`), checks the
 * lines that begin in each, and sends each block's results as it is done,
 * at most `ahead` blocks before the parent has taken them. It packs the
 * events' data over the shapes the import's learning packer knows (those
 * it learns come through `shapesPort`); data of another shape is sent as
 * JSON, for that packer.
 */
import { closeSync, fstatSync, openSync } from 'node:fs';
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import { KnownShapesPacker, type Shapes } from '../eventstore/packed-data.js';
import { checkLine } from './line-check.js';
import { BatchWire, type LineBatch, type LineTask, type LinesEnd } from './line-messages.js';
import { blockLines } from './lines.js';

const { file, index, workers, blockBytes, ahead, shapes, shapesPort } = workerData as LineTask;
const packer = new KnownShapesPacker(shapes);
/** A block's packed data, one after another. */
let packed = new Uint8Array(2 * blockBytes);
let used = 0;
/** Pack into `packed` (data's bytes, a view of it). */
const pack = (data: unknown): Uint8Array | undefined => {
  const bytes = packer.pack(data);
  if (bytes === undefined) return undefined;
  if (used + bytes.length > packed.length) {
    const bigger = new Uint8Array(2 * (used + bytes.length));
    bigger.set(packed.subarray(0, used));
    packed = bigger;
  }
  packed.set(bytes, used);
  used += bytes.length;
  return packed.subarray(used - bytes.length, used);
};
/** The results of the batch under way. */
const results = new BatchWire();
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
  for (let update; (update = receiveMessageOnPort(shapesPort)) !== undefined; ) packer.know(update.message as Shapes);
  const rows = blockLines(fd, batch * blockBytes, (batch + 1) * blockBytes, size);
  used = 0;
  // Line numbers from 1 in the block: the parent, which knows how many lines came before it, makes them the file's.
  for (let k = 0; k < rows.length; k++) {
    const result = checkLine(rows[k]!, k + 1, pack);
    if (result !== undefined) results.add(result);
  }
  while (sent - taken >= ahead) await new Promise<void>((resolve) => (wake = resolve));
  sent++;
  const data = packed.slice(0, used);
  parentPort!.postMessage({ batch, lines: rows.length, json: results.json(), packed: data } satisfies LineBatch, [data.buffer]);
}
closeSync(fd);
shapesPort.close();
parentPort!.postMessage({ end: true } satisfies LinesEnd);
