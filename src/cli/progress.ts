/**
 * Progress of a long command on stderr: on a terminal, a bar redrawn in place
 * (progress-bar.ts); otherwise a plain line every few seconds and at the start
 * of each phase (progress-lines.ts) — what it is doing, how far, the rate, and
 * the time left when the total is known.
 */
import { progressBars } from './progress-bar.js';
import { progressLines } from './progress-lines.js';

export interface Progress {
  readonly phase: string;
  readonly done: number;
  readonly total?: number;
}

export interface ProgressPrinter {
  update(progress: Progress): void;
  /** End the display (on a terminal, the bar's line; its redraws stop). */
  done(): void;
}

export function progressPrinter(
  label: string,
  stream: NodeJS.WriteStream = process.stderr,
  /** How often a plain line is written (not on a terminal). */
  everyMs = 3000,
  clock: () => number = () => performance.now(),
): ProgressPrinter {
  return stream.isTTY ? progressBars(label, stream) : progressLines(label, stream, everyMs, clock);
}
