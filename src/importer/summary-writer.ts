/** The thread that writes a summary of the log (see saveSummary in log-summary.ts): it says whether it did. */
import { parentPort, workerData } from 'node:worker_threads';
import { type SummaryWrite, writeSummaryFile } from './summary-file.js';

parentPort!.postMessage(writeSummaryFile(workerData as SummaryWrite));
