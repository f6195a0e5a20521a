/** Progress where stderr is not a terminal (a log file, a pipe): plain lines, one when a phase begins, then one every few seconds. */
import type { Progress, ProgressPrinter } from './progress.js';

/** A count as progress shows it. */
export const number = (n: number) => Math.round(n).toLocaleString('en-US');

/** Seconds of a phase below which a rate says nothing (the first batch may be done before the phase is seen). */
export const RATE_FROM_SECONDS = 1;

/** A line for a phase's first update, then one every `everyMs` at most: what it is doing, how far, the rate, the time left. */
export function progressLines(label: string, stream: NodeJS.WriteStream, everyMs: number, clock: () => number): ProgressPrinter {
  let phase = '';
  let phaseStarted = clock();
  let printed = -Infinity;
  const line = ({ phase: now, done, total }: Progress) => {
    const seconds = (clock() - phaseStarted) / 1000;
    const of = total === undefined ? '' : ` of ${number(total)}`;
    if (seconds < RATE_FROM_SECONDS) return `${label}: ${now} ${number(done)}${of}`;
    const rate = done / seconds;
    const left = total !== undefined && rate > 0 ? `, about ${number((total - done) / rate)} s left` : '';
    return `${label}: ${now} ${number(done)}${of} (${number(rate)}/s${left})`;
  };
  return {
    update(progress) {
      const begun = progress.phase !== phase;
      if (begun) {
        phase = progress.phase;
        phaseStarted = clock();
      }
      const now = clock();
      // A phase's first update is shown at once: an operator (or a benchmark) sees when the appends began.
      if (now - printed < everyMs && !begun) return;
      printed = now;
      stream.write(`${line(progress)}\n`);
    },
    done() {},
  };
}
