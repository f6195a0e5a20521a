/**
 * The read model's background work while serving, a slice of a few
 * milliseconds at a time between requests: the indexes of changed tables
 * (woken at once by a change), the shift → reservations map a
 * moved shift needs and the symbol codes of the snapshot (once, after a
 * load), then the rank matrices searches
 * wanted, looked for again every `idleMs` when there is nothing to do (or
 * the model is not `ready`). The timers never keep the process alive.
 */
import type { ReadModel } from './model.js';

export function workInBackground(model: ReadModel, ready: () => boolean = () => true, sliceMs = 4, idleMs = 100): { stop(): void } {
  let stopped = false;
  let timer: NodeJS.Timeout | NodeJS.Immediate | undefined;
  /** Whether the timer is the idle one (a change may cut it short). */
  let idle = true;
  const after = (more: boolean) => {
    idle = !more;
    timer = more ? setImmediate(tick).unref() : setTimeout(tick, idleMs).unref();
  };
  const tick = () => {
    if (stopped) return;
    if (!ready()) return after(false);
    const deadline = performance.now() + sliceMs;
    // (Each does some work, even past the deadline: none of them waits for the others to be done.)
    const flushing = model.flushInBackground(deadline);
    after(model.noteReservations(deadline) || model.makeSymbolCodes(deadline) || model.buildRanks(deadline) || flushing);
  };
  model.onChange = () => {
    if (!idle || stopped) return;
    clearTimeout(timer as NodeJS.Timeout);
    after(true);
  };
  timer = setTimeout(tick, idleMs).unref();
  return {
    stop() {
      stopped = true;
      model.onChange = undefined;
      clearTimeout(timer as NodeJS.Timeout);
      clearImmediate(timer as NodeJS.Immediate);
    },
  };
}
