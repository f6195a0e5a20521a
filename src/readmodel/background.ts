/**
 * The read model's background work while serving: the rank matrices
 * searches wanted, made a slice of a few milliseconds at a time between
 * requests, and looked for again every `idleMs` when there is nothing to do.
 * The timers never keep the process alive.
 */
import type { ReadModel } from './model.js';

export function workInBackground(model: ReadModel, sliceMs = 4, idleMs = 100): { stop(): void } {
  let stopped = false;
  let timer: NodeJS.Timeout | NodeJS.Immediate | undefined;
  const tick = () => {
    if (stopped) return;
    if (model.buildRanks(performance.now() + sliceMs)) timer = setImmediate(tick).unref();
    else timer = setTimeout(tick, idleMs).unref();
  };
  timer = setTimeout(tick, idleMs).unref();
  return {
    stop() {
      stopped = true;
      clearTimeout(timer as NodeJS.Timeout);
      clearImmediate(timer as NodeJS.Immediate);
    },
  };
}
