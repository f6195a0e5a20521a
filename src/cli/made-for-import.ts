/**
 * What an import makes before it knows whether any line will pass — DATA_DIR, and the embedded log it opens to check
 * the lines against — taken away again when it fails having appended nothing: a command that fails makes nothing on
 * disk (README). A log or a directory that was there before is never touched.
 */
import { existsSync, rmdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Config } from '../config.js';
import type { EventStore } from '../eventstore/port.js';
import { makeDataDir } from '../runtime.js';

export interface MadeForImport {
  /**
   * Whether the log `store` has open is one this import made, holds no event and is open in no other process (a
   * server started meanwhile would go on writing into removed files): then it can go. Asked before it is closed.
   */
  logUnused(store: EventStore): Promise<boolean>;
  /** Once the log is closed: remove it if it was unused, then the directories this import made, as far as they are empty. */
  takeBack(logUnused: boolean): void;
}

/** Make DATA_DIR for an import, noting what was missing (before the log is opened: opening it makes it). */
export function makeForImport(config: Pick<Config, 'DATA_DIR' | 'EVENTSTORE_URL'>): MadeForImport {
  const log = join(config.DATA_DIR, 'log');
  const newLog = config.EVENTSTORE_URL === undefined && !existsSync(log) ? log : undefined;
  // The first directory made: DATA_DIR or one of its parents (undefined: DATA_DIR was there).
  const firstMade = makeDataDir(config.DATA_DIR);
  return {
    async logUnused(store) {
      return newLog !== undefined && (await store.head()).commit < 0n && !(store.openElsewhere?.() ?? true);
    },
    takeBack(logUnused) {
      if (logUnused && newLog !== undefined) rmSync(newLog, { recursive: true, force: true });
      if (firstMade !== undefined) removeEmptyUpTo(resolve(config.DATA_DIR), resolve(firstMade));
    },
  };
}

/** Remove `dir` and its parents up to `last` while each is empty. */
function removeEmptyUpTo(dir: string, last: string): void {
  for (;;) {
    try {
      rmdirSync(dir);
    } catch {
      return; // not empty: something is kept there (a log that holds events, a file put there meanwhile)
    }
    if (dir === last || dir === dirname(dir)) return;
    dir = dirname(dir);
  }
}
