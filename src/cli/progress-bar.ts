/**
 * Progress on a terminal (cli-progress): a bar for each phase, redrawn in place at most ten times a second — the
 * phase, the bar and its percentage, done of the total, the rate and the time left (cli-progress's estimate over its
 * last updates); a phase with no total shows its count and rate. When a phase ends its last state stays on its line.
 */
import cliProgress, { type Options, type Params } from 'cli-progress';
import { number, RATE_FROM_SECONDS } from './progress-lines.js';
import type { Progress, ProgressPrinter } from './progress.js';

const { Format, SingleBar } = cliProgress;

/** What a bar shows besides its value and total (cli-progress's payload). */
interface Shown {
  readonly phase: string;
  readonly counted: boolean;
}

/** The bar's width in characters, at most; on a narrow terminal it shrinks to leave the figures room, down to BAR_LEAST. */
const BAR_SIZE = 20;
const BAR_LEAST = 5;

export function progressBars(label: string, stream: NodeJS.WriteStream): ProgressPrinter {
  /** The line of the phase shown: cli-progress hands it the bar's state, and this the phase. */
  const format = (options: Options, params: Params, { phase, counted }: Shown) => {
    const seconds = ((params.stopTime ?? Date.now()) - params.startTime) / 1000;
    const rate = seconds >= RATE_FROM_SECONDS ? params.value / seconds : undefined;
    const eta = counted && rate !== undefined && typeof params.eta === 'number' ? `, ETA ${Format.TimeFormat(params.eta, options, 1)}` : '';
    const figures = rate === undefined ? '' : ` (${number(rate)}/s${eta})`;
    // A line wider than the terminal would wrap, and each redraw leave its first row behind: it is cut to fit.
    const width = params.maxWidth - 1;
    const head = `${label}: ${phase}`;
    if (!counted) return `${head} ${number(params.value)}${figures}`.slice(0, width);
    const tail = ` ${Math.floor(params.progress * 100)}% ${number(params.value)} of ${number(params.total)}${figures}`;
    const room = Math.min(BAR_SIZE, width - head.length - tail.length - ' []'.length);
    const drawn = room >= BAR_LEAST ? ` [${Format.BarFormat(params.progress, { ...options, barsize: room })}]` : '';
    return `${head}${drawn}${tail}`.slice(0, width);
  };
  let bar: InstanceType<typeof SingleBar> | undefined;
  let phase = '';
  return {
    update({ phase: now, done, total }: Progress) {
      const shown: Shown = { phase: now, counted: total !== undefined };
      if (bar === undefined || now !== phase) {
        bar?.stop();
        phase = now;
        // linewrap: true leaves the terminal's wrapping alone (cli-progress turns it off until stopped: a command
        // interrupted would leave it off); the line is made to fit the terminal's width instead.
        bar = new SingleBar({ stream, format, barsize: BAR_SIZE, linewrap: true });
        bar.start(total ?? 0, done, shown);
        return;
      }
      if (total !== undefined) bar.setTotal(total);
      bar.update(done, shown);
    },
    done() {
      bar?.stop();
      bar = undefined;
    },
  };
}
