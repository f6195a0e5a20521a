/** Wiring: the event store chosen by the configuration, the read model and its projector. */
import { mkdirSync } from 'node:fs';
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

export function openEventStore(config: Pick<Config, 'DATA_DIR' | 'EVENTSTORE_URL'>): EventStore {
  if (config.EVENTSTORE_URL !== undefined) return EsdbEventStore.open(config.EVENTSTORE_URL);
  mkdirSync(config.DATA_DIR, { recursive: true });
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
