/**
 * Progress of a long command on stderr: on a terminal one line rewritten in
 * place (at most every 200 ms), otherwise a plain line every few seconds —
 * what it is doing, how far, the rate, and the time left when the total is
 * known.
 */
export interface Progress {
  readonly phase: string;
  readonly done: number;
  readonly total?: number;
}

const number = (n: number) => Math.round(n).toLocaleString('en-US');

export function progressPrinter(label: string, stream: NodeJS.WriteStream = process.stderr, everyMs = stream.isTTY ? 200 : 3000) {
  let phase = '';
  let phaseStarted = performance.now();
  let printed = 0;
  let shown = false;
  const line = ({ phase: now, done, total }: Progress) => {
    const seconds = (performance.now() - phaseStarted) / 1000;
    const rate = seconds > 0 ? done / seconds : 0;
    const of = total === undefined ? '' : ` of ${number(total)}`;
    const left = total !== undefined && rate > 0 ? `, about ${number((total - done) / rate)} s left` : '';
    return `${label}: ${now} ${number(done)}${of} (${number(rate)}/s${left})`;
  };
  return {
    update(progress: Progress): void {
      if (progress.phase !== phase) {
        phase = progress.phase;
        phaseStarted = performance.now();
      }
      const now = performance.now();
      if (now - printed < everyMs) return;
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
