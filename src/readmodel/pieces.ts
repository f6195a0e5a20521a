/**
 * Work done a piece at a time: a generator that yields between pieces (where
 * its caller may let other work run) and returns what the work made.
 */

/** What the work returns, every piece run now. */
export function runThrough<T>(pieces: Iterator<unknown, T>): T {
  for (;;) {
    const step = pieces.next();
    if (step.done) return step.value;
  }
}
