/** The import thread (import-thread.ts): imports each file in turn into the log, and tells its parent how it goes. */
import { parentPort, workerData } from 'node:worker_threads';
import { importFile } from '../importer/import.js';
import { fileSpool } from '../importer/spool.js';
import { openEventStore } from '../runtime.js';
import type { ImportMessage, ImportTask } from './import-thread.js';
import { makeForImport } from './made-for-import.js';
import { toldByMessage } from './told-by-message.js';

const { config, files, summaryFile } = workerData as ImportTask;
const tell = (message: ImportMessage) => parentPort!.postMessage(message);

/** Import each file in turn; an import that fails takes back what it made for nothing (a new log it appended nothing to, DATA_DIR). */
async function importEach(): Promise<void> {
  // DATA_DIR before the log (EventStoreDB's makes none): checked events wait in a file there, so that an import's
  // memory does not grow with its file.
  const made = makeForImport(config);
  let logUnused = false;
  try {
    const store = openEventStore(config);
    try {
      for (const file of files) {
        const started = performance.now();
        const spool = fileSpool(config.DATA_DIR);
        const { appended, skipped } = await importFile(store, file, { onProgress: (progress) => tell({ kind: 'progress', file, progress }), spool, ownsStore: true, summaryFile });
        tell({ kind: 'imported', file, appended, skipped, seconds: (performance.now() - started) / 1000 });
      }
    } catch (error) {
      logUnused = await made.logUnused(store).catch(() => false);
      throw error;
    } finally {
      await store.close();
    }
  } catch (error) {
    made.takeBack(logUnused);
    throw error;
  }
}

try {
  await importEach();
} catch (error) {
  // Told by its message (the parent prints it so); any other error crosses to the parent whole, its stack included.
  if (!toldByMessage(error)) throw error;
  tell({ kind: 'refused', message: error.message });
}
