/**
 * The read model's background work while serving, a slice of a few
 * milliseconds at a time between requests: the shift → reservations map a
 * moved shift needs, the bigger arrays of tables nearly full, the memory big
 * indexes make their next orders in (ahead of their first change), and the
 * symbol codes of the snapshot (once, after a load), then the zone maps and
 * rank matrices searches wanted, looked for again every `idleMs` when there
 * is nothing to do (or the model is not `ready`). First of all, once ready,
 * the changes of the big tables' indexes (ReadModel.publishInBackground),
 * woken at once by a change (or when the table may publish again). The timers never keep the process alive.
 */
import type { ReadModel } from './model.js';

/** One slice of the background work until `deadline` (performance.now(), ms): whether some is left. */
function workUntil(model: ReadModel, deadline: number): boolean {
  return model.publishIndexes(deadline) || model.noteReservations(deadline) || model.growAhead(deadline) || model.makeSpares(deadline) || model.makeSymbolCodes(deadline) || model.makeZoneMaps(deadline) || model.buildRanks(deadline);
}

/**
 * Do now what the background would do a slice at a time (benchmarks of the steady state): all of it but a growth
 * ahead of need, whose allocations are paced (it goes on in the background).
 */
export function finishBackgroundWork(model: ReadModel): void {
  while (workUntil(model, Infinity));
}

export function workInBackground(model: ReadModel, ready: () => boolean = () => true, sliceMs = 4, idleMs = 100): { stop(): void } {
  let stopped = false;
  /** Set while waiting `idleMs` with nothing to do: a change to publish wakes it at once. */
  let asleep = false;
  let timer: NodeJS.Timeout | NodeJS.Immediate | undefined;
  const wake = () => {
    if (!asleep || stopped) return;
    asleep = false;
    clearTimeout(timer as NodeJS.Timeout);
    timer = setImmediate(tick).unref();
  };
  const tick = () => {
    asleep = false;
    if (stopped) return;
    if (!ready()) {
      timer = setTimeout(tick, idleMs).unref();
      return;
    }
    if (!model.publishesInBackground) model.publishInBackground(true, wake);
    const deadline = performance.now() + sliceMs;
    if (workUntil(model, deadline)) timer = setImmediate(tick).unref();
    else {
      asleep = true;
      // (Until a table's changes may be published, if that comes first: see Table.publicationGapPerRowMs.)
      timer = setTimeout(tick, Math.max(1, Math.min(idleMs, model.publicationDue() - performance.now()))).unref();
    }
  };
  timer = setImmediate(tick).unref();
  return {
    stop() {
      stopped = true;
      if (model.publishesInBackground) model.publishInBackground(false);
      clearTimeout(timer as NodeJS.Timeout);
      clearImmediate(timer as NodeJS.Immediate);
    },
  };
}
