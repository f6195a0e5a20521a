/**
 * Copies of strings to be kept, sharing no memory with what they were read
 * from.
 *
 * lmdb-js decodes a stored value with msgpackr, whose native extractor
 * reads every string of the value into one string and hands out slices of
 * it: V8 keeps a slice as a reference to the whole. A string kept from an
 * event read from the log (a record's id, a value met for the first time)
 * then keeps the whole event's text alive with it: over 200,000 events of
 * the benchmark's log, an id kept as it was decoded held 370 bytes of the
 * heap, a copy 77. A server following a live import keeps one for every
 * record it makes or changes.
 */

/** Any surrogate: such a string is copied through JSON (a lone one would not survive UTF-8). */
const SURROGATE = /[\ud800-\udfff]/;

/** A copy of `value` of its own (0.2 µs for an id: only for what is kept). */
export function ownCopy(value: string): string {
  return SURROGATE.test(value) ? (JSON.parse(JSON.stringify(value)) as string) : Buffer.from(value, 'utf8').toString('utf8');
}
