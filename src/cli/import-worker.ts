/** The import thread (import-thread.ts): imports each file in turn into the log, and tells its parent how it goes. */
import { mkdirSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { ConfigError } from '../config.js';
import { UnreadableLogError } from '../eventstore/embedded.js';
import { ImportAppendError, ImportError, importFile } from '../importer/import.js';
import { fileSpool } from '../importer/spool.js';
import { openEventStore } from '../runtime.js';
import type { ImportMessage, ImportTask } from './import-thread.js';

const { config, files, summaryFile } = workerData as ImportTask;
const tell = (message: ImportMessage) => parentPort!.postMessage(message);

/** An operator's mistake or a refused file: its message is all there is to say. */
const refused = (error: unknown) => error instanceof ImportError || error instanceof ImportAppendError || error instanceof ConfigError || error instanceof UnreadableLogError;

try {
  const store = openEventStore(config);
  try {
    for (const file of files) {
      const started = performance.now();
      // Checked events wait in a file next to the log: an import's memory does not grow with its file.
      mkdirSync(config.DATA_DIR, { recursive: true });
      const spool = fileSpool(config.DATA_DIR);
      const { appended, skipped } = await importFile(store, file, { onProgress: (progress) => tell({ kind: 'progress', file, progress }), spool, ownsStore: true, summaryFile });
      tell({ kind: 'imported', file, appended, skipped, seconds: (performance.now() - started) / 1000 });
    }
  } finally {
    await store.close();
  }
} catch (error) {
  if (!refused(error)) throw error;
  tell({ kind: 'refused', message: (error as Error).message });
}
