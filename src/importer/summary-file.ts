/**
 * The writing of a summary of the log (log-summary.ts) to its file, whole or not at all: to a file of its own,
 * synced, then renamed over the last, so that a reader sees the old file or the new one. Apart from the rest of
 * log-summary.ts so that the thread that writes it (summary-writer.ts) loads nothing else.
 */
import { randomUUID } from 'node:crypto';
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** What the summary writer's thread is given: the file, and its bytes in order. */
export interface SummaryWrite {
  readonly file: string;
  readonly parts: readonly Uint8Array[];
}

/** Write `parts` one after another as `file`; whether it was (failing leaves the file as it was). */
export function writeSummaryFile({ file, parts }: SummaryWrite): boolean {
  // Named as a spool is: one a killed import left is removed by the next import (spool.ts).
  const temporary = join(dirname(file), `import-${process.pid}-${randomUUID()}.summary`);
  try {
    const fd = openSync(temporary, 'w');
    try {
      for (const bytes of parts) for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done, bytes.length - done);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, file);
    return true;
  } catch {
    rmSync(temporary, { force: true });
    return false;
  }
}
