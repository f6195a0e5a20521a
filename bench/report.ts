/** Printing timings of the random mix: by query class (median, p99, max) and the slowest queries. */

export interface Timing {
  /** Milliseconds. */
  readonly ms: number;
  readonly cls: string;
  readonly path: string;
  readonly count: number;
  /** The engine's plan, where the timing is the engine's own. */
  readonly plan?: string;
}

/** The engine's plan as the bench prints it: the way (and those that gave up before it) and its estimated rows. */
export const planOf = ({ plan, cost }: { plan?: string | undefined; cost?: number | undefined }) =>
  plan === undefined ? undefined : cost === undefined ? plan : `${plan} ~${Math.round(cost)}`;

/** The value at quantile q (0 to 1) of sorted values. */
export const quantile = (sorted: readonly number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
export const us = (ms: number) => `${(ms * 1000).toFixed(0)} µs`;

/** Query classes (endpoint, filter kinds, ordering, page depth) by their worst time first: the `rows` worst, and a line for the rest. */
export function classTable(timings: readonly Timing[], rows: number): void {
  const byClass = new Map<string, number[]>();
  for (const t of timings) {
    const list = byClass.get(t.cls) ?? [];
    list.push(t.ms);
    byClass.set(t.cls, list);
  }
  const classes = [...byClass].map(([cls, list]) => {
    const sorted = list.sort((a, b) => a - b);
    return { cls, n: sorted.length, median: quantile(sorted, 0.5), p99: quantile(sorted, 0.99), max: sorted[sorted.length - 1]! };
  });
  classes.sort((a, b) => b.max - a.max);
  console.log(`by class (${classes.length} classes; the ${Math.min(rows, classes.length)} with the slowest query):`);
  console.log('  median     p99     max      n  class');
  for (const c of classes.slice(0, rows)) {
    console.log(`  ${us(c.median).padStart(7)} ${us(c.p99).padStart(7)} ${us(c.max).padStart(7)} ${String(c.n).padStart(6)}  ${c.cls}`);
  }
  const all = timings.map((t) => t.ms).sort((a, b) => a - b);
  console.log(`  all: median ${us(quantile(all, 0.5))}, p99 ${us(quantile(all, 0.99))}, max ${us(all[all.length - 1]!)}, n ${all.length}`);
}

export function slowest(timings: readonly Timing[], n: number): void {
  console.log(`the ${n} slowest queries:`);
  for (const t of [...timings].sort((a, b) => b.ms - a.ms).slice(0, n)) {
    console.log(`  ${us(t.ms).padStart(8)}  ${String(t.count).padStart(7)} matches  ${t.path}${t.plan ? `  [${t.plan}]` : ''}`);
  }
}

/** Where the total time goes: the classes that take most of it, with their share. */
export function heaviest(timings: readonly Timing[], rows: number): void {
  const total = timings.reduce((a, t) => a + t.ms, 0);
  const byClass = new Map<string, { n: number; ms: number }>();
  for (const t of timings) {
    const entry = byClass.get(t.cls) ?? { n: 0, ms: 0 };
    entry.n++;
    entry.ms += t.ms;
    byClass.set(t.cls, entry);
  }
  console.log(`the ${rows} classes taking the most time in all (share of the total):`);
  for (const [cls, { n, ms }] of [...byClass].sort((a, b) => b[1].ms - a[1].ms).slice(0, rows)) {
    console.log(`  ${((100 * ms) / total).toFixed(1).padStart(5)} %  mean ${us(ms / n).padStart(8)}  n ${String(n).padStart(5)}  ${cls}`);
  }
}

/** Where the total time goes by the engine's way of answering (its plan without the estimate), with each way's share. */
export function byPlan(timings: readonly Timing[]): void {
  const total = timings.reduce((a, t) => a + t.ms, 0);
  const ways = new Map<string, { n: number; ms: number }>();
  for (const t of timings) {
    const way = t.plan?.replace(/ ~\d+$/, '') ?? '(none)';
    const entry = ways.get(way) ?? { n: 0, ms: 0 };
    entry.n++;
    entry.ms += t.ms;
    ways.set(way, entry);
  }
  console.log('by way of answering (share of the total):');
  for (const [way, { n, ms }] of [...ways].sort((a, b) => b[1].ms - a[1].ms)) {
    console.log(`  ${((100 * ms) / total).toFixed(1).padStart(5)} %  mean ${us(ms / n).padStart(8)}  n ${String(n).padStart(5)}  ${way}`);
  }
}
