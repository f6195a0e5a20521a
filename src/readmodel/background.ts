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

/**
 * A slice of the server's internal work between requests, in ms: the background's here, the fold's of events from the
 * log and a journal fold's encoding (projector.ts). A piece under way is finished (some take about a millisecond). A
 * request that comes while a slice runs waits for its rest, so the slice is what a read pays while the server is busy:
 * during a live import, and after it, when its tables' rank matrices and positions are made again for seconds. The
 * operator run's live step (100,000 events into the benchmark's million shifts, made by its import then a rebuild; 200
 * random-mix reads a second; three runs each, alternated, yardsticks 28-36 µs; the server's peak 2,410-2,474 MB either
 * way), at 2 ms against the 4 and 5 ms these were: reads while the server folds its journal after the import, p50
 * 1.0-1.6 ms against 3.2-3.7 ms, p99 18.6-20.7 against 25.4-29.4 ms; during the import, p99 20.8-42.5 against 30.3-74.7
 * ms (the slowest reads wait for turns holding several things at once: a fold slice, a collection, other requests); the
 * server's longest event-loop delay per half second, median 8.8-11.9 ms against 18.2-24.0 ms. The benchmark's live
 * window (the fixed mix at full load while 10,000 events are appended; two runs each): p99 6 and 6 ms against 6 and 7
 * ms, 12,167 and 11,099 requests a second against 11,810 and 9,986. A journal fold's encoding was still in slices of 5
 * ms (pieces of 2,048 records); at 2 ms (pieces of 1,024), in one traced live step each on a slow day (yardsticks 76
 * and 81 µs), the server's event loop stood still for over 10 ms 82 times (1.23 s in all) during the fold's last 10 s,
 * against 164 times (2.35 s); the fold took 13.0 s against 12.3-14.2 s in five runs.
 */
export const SLICE_MS = 2;

export function workInBackground(model: ReadModel, ready: () => boolean = () => true, sliceMs = SLICE_MS, idleMs = 100): { stop(): void } {
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
