/** Wiring: the event store chosen by the configuration, the read model and its projector. */
import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { fragmentArena } from './readmodel/fragment-store.js';
import { rankMatrices } from './readmodel/order-ranks.js';
import { EmbeddedEventStore } from './eventstore/embedded.js';
import { EsdbEventStore } from './eventstore/esdb.js';
import type { EventStore } from './eventstore/port.js';
import { ReadModel } from './readmodel/model.js';
import { ReadModelStore } from './readmodel/persistence.js';
import { Projector } from './readmodel/projector.js';
import { tableDefs } from './resources/index.js';

/** DATA_DIR cannot hold our files: a file is in its place or on its path, or it cannot be made. The message says which, in one line. */
export class DataDirError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DataDirError';
  }

  static notADirectory(dir: string): DataDirError {
    return new DataDirError(`DATA_DIR ${dir} is not a directory`);
  }
}

/** What stops a DATA_DIR being made or used, in an operator's words (by the error's code). */
const PATH_PROBLEMS: Readonly<Record<string, string>> = {
  ENOTDIR: 'a part of its path is a file, not a directory',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on the device',
};

const codeOf = (error: unknown) => (error as NodeJS.ErrnoException).code;

/**
 * Make DATA_DIR (and its parents) unless it is there; anything in the way is a DataDirError naming the path, never
 * a stack trace. The first directory it made (undefined: DATA_DIR was there), for a command that fails to take away.
 */
export function makeDataDir(dir: string): string | undefined {
  try {
    return mkdirSync(dir, { recursive: true });
  } catch (error) {
    const code = codeOf(error);
    // A recursive mkdir fails with EEXIST only when something other than a directory is at the path.
    if (code === 'EEXIST') throw DataDirError.notADirectory(dir);
    if (code === undefined) throw error;
    throw new DataDirError(`cannot create DATA_DIR ${dir}: ${PATH_PROBLEMS[code] ?? code}`);
  }
}

/**
 * DATA_DIR as makeDataDir would find it, making nothing: a DataDirError if something other than a directory is at
 * its path or on it. A DATA_DIR that is not there passes (a command that only reads it says what is missing).
 */
export function checkDataDir(dir: string): void {
  let isDirectory: boolean;
  try {
    isDirectory = statSync(dir).isDirectory();
  } catch (error) {
    const code = codeOf(error);
    if (code === 'ENOENT') return;
    if (code === undefined) throw error;
    throw new DataDirError(`cannot use DATA_DIR ${dir}: ${PATH_PROBLEMS[code] ?? code}`);
  }
  if (!isDirectory) throw DataDirError.notADirectory(dir);
}

export function openEventStore(config: Pick<Config, 'DATA_DIR' | 'EVENTSTORE_URL'>): EventStore {
  if (config.EVENTSTORE_URL !== undefined) return EsdbEventStore.open(config.EVENTSTORE_URL);
  makeDataDir(config.DATA_DIR);
  return EmbeddedEventStore.open(join(config.DATA_DIR, 'log'));
}

export interface Runtime {
  store: EventStore;
  model: ReadModel;
  disk: ReadModelStore;
  projector: Projector;
  close(): Promise<void>;
}

export interface RuntimeOptions {
  /** The time in milliseconds (ages in profiles); tests fix it so that answers stay stable. */
  clock?: () => number;
}

export function openRuntime(
  config: Pick<Config, 'DATA_DIR' | 'EVENTSTORE_URL'> & Partial<Pick<Config, 'JOURNAL_FOLD_FROM' | 'FRAGMENT_CACHE_MB' | 'RANK_MATRIX_MB'>>,
  log?: Logger,
  options: RuntimeOptions = {},
): Runtime {
  // The read model lives in DATA_DIR whatever the log (EventStoreDB's included): made before anything is opened.
  makeDataDir(config.DATA_DIR);
  const store = openEventStore(config);
  if (config.FRAGMENT_CACHE_MB !== undefined) fragmentArena.setBudget(config.FRAGMENT_CACHE_MB * 2 ** 20);
  if (config.RANK_MATRIX_MB !== undefined) rankMatrices.setBudget(config.RANK_MATRIX_MB * 2 ** 20);
  const disk = ReadModelStore.open(join(config.DATA_DIR, 'readmodel'), (problem) =>
    log?.warn({ problem }, 'read model unreadable: dropped; it is rebuilt from the log'),
  );
  const model = new ReadModel(tableDefs, options.clock);
  const projector = new Projector(store, model, disk, log, undefined, config.JOURNAL_FOLD_FROM);
  return {
    store,
    model,
    disk,
    projector,
    async close() {
      await projector.stop();
      await disk.close();
      await store.close();
    },
  };
}
