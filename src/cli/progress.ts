/**
 * Progress of a long command on stderr: on a terminal one line rewritten in
 * place (at most every 200 ms), otherwise a plain line every few seconds and
 * at the start of each phase — what it is doing, how far, the rate, and the
 * time left when the total is known.
 */
export interface Progress {
  readonly phase: string;
  readonly done: number;
  readonly total?: number;
}

const number = (n: number) => Math.round(n).toLocaleString('en-US');

export function progressPrinter(
  label: string,
  stream: NodeJS.WriteStream = process.stderr,
  everyMs = stream.isTTY ? 200 : 3000,
  clock: () => number = () => performance.now(),
) {
  let phase = '';
  let phaseStarted = clock();
  let printed = 0;
  let shown = false;
  const line = ({ phase: now, done, total }: Progress) => {
    const seconds = (clock() - phaseStarted) / 1000;
    const of = total === undefined ? '' : ` of ${number(total)}`;
    // A rate over less than a second of a phase says nothing (the first batch may be done before the phase is seen).
    if (seconds < 1) return `${label}: ${now} ${number(done)}${of}`;
    const rate = done / seconds;
    const left = total !== undefined && rate > 0 ? `, about ${number((total - done) / rate)} s left` : '';
    return `${label}: ${now} ${number(done)}${of} (${number(rate)}/s${left})`;
  };
  return {
    update(progress: Progress): void {
      const begun = progress.phase !== phase;
      if (begun) {
        phase = progress.phase;
        phaseStarted = clock();
      }
      const now = clock();
      // A phase's first update is shown at once: an operator (or a benchmark) sees when the appends began.
      if (now - printed < everyMs && !begun) return;
      printed = now;
      if (stream.isTTY) stream.write(`\r${line(progress)}\u001b[K`);
      else stream.write(`${line(progress)}\n`);
      shown = true;
    },
    /** End the rewritten line (on a terminal). */
    done(): void {
      if (shown && stream.isTTY) stream.write('\n');
    },
  };
}
