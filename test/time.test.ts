import fc from 'fast-check';
import t from 'tap';
import { formatTimestamp, parseDate, parseEventTimestamp, parseTimeOfDay, parseTimestamp, timeOfDay } from '../src/time.js';

t.test('timestamps keep microseconds', async (t) => {
  const us = parseTimestamp('2026-09-01T09:00:00.000001Z')!;
  t.equal(us - parseTimestamp('2026-09-01T09:00:00Z')!, 1);
  t.equal(formatTimestamp(us), '2026-09-01T09:00:00.000001Z');
  t.equal(formatTimestamp(parseTimestamp('2026-09-01T09:00:00.5Z')!), '2026-09-01T09:00:00.500000Z');
  t.equal(formatTimestamp(parseTimestamp('2026-09-01T09:00:00Z')!), '2026-09-01T09:00:00Z');
  t.equal(formatTimestamp(parseTimestamp('1969-12-31T23:59:59.999999Z')!), '1969-12-31T23:59:59.999999Z');
});

t.test('a timestamp is written as the ISO form of its instant, with the microseconds when there are any', async (t) => {
  // Years 1700 to 2239 (microseconds held exactly in a double: within 2^53 of 1970), by the Date of its milliseconds and
  // its microseconds apart.
  const micros = fc.integer({ min: -8_520_336_000_000_000, max: 8_520_336_000_000_000 });
  fc.assert(
    fc.property(micros, fc.boolean(), (us, whole) => {
      const at = whole ? us - (((us % 1_000_000) + 1_000_000) % 1_000_000) : us;
      const sub = ((at % 1_000_000) + 1_000_000) % 1_000_000;
      const iso = new Date(Math.floor(at / 1000)).toISOString().slice(0, 19);
      const expected = sub === 0 ? `${iso}Z` : `${iso}.${String(sub).padStart(6, '0')}Z`;
      if (formatTimestamp(at) !== expected) throw new Error(`${at}: ${formatTimestamp(at)}, expected ${expected}`);
      return parseTimestamp(expected) === at;
    }),
    { numRuns: 5000, seed: 7 },
  );
  t.pass('5000 instants');
});

t.test('timestamp filter forms', async (t) => {
  const nine = parseTimestamp('2026-09-01T09:00:00Z');
  t.equal(parseTimestamp('2026-09-01T09:00Z'), nine, 'no seconds');
  t.equal(parseTimestamp('2026-09-01T09:00:00'), nine, 'no zone is UTC');
  t.equal(parseTimestamp('2026-09-01T11:00:00+02:00'), nine, 'offset');
  t.equal(parseTimestamp('2026-09-01T04:30:00-04:30'), nine, 'negative offset');
  t.equal(parseTimestamp('2026-09-01'), parseTimestamp('2026-09-01T00:00:00Z'), 'a date is its midnight');
  for (const bad of ['2026-02-30T00:00:00Z', '2026-09-01T24:00:00Z', '2026-09-01T09:00:00.1234567Z', 'yesterday', '']) {
    t.equal(parseTimestamp(bad), undefined, bad);
  }
  t.equal(parseEventTimestamp('2026-09-01T09:00:00'), undefined, 'events need Z');
});

t.test('dates and times of day', async (t) => {
  t.equal(parseDate('2024-02-29'), 19782);
  t.equal(parseDate('2023-02-29'), undefined, 'not a calendar date');
  t.equal(parseDate('2024-2-29'), undefined);
  t.equal(parseTimeOfDay('09:00'), 9 * 3600e6);
  t.equal(parseTimeOfDay('09:00:00.5'), 9 * 3600e6 + 500_000);
  t.equal(parseTimeOfDay('9:00'), undefined);
  t.equal(parseTimeOfDay('25:00'), undefined);
  t.equal(timeOfDay(parseTimestamp('2026-09-01T23:30:00.000007Z')!), (23 * 3600 + 1800) * 1e6 + 7);
});

t.test('parseDate agrees with the calendar for every day from 1600 to 2400', async (t) => {
  const first = parseDate('1600-01-01')!;
  const last = parseDate('2400-12-31')!;
  t.equal(new Date(first * 86_400_000).toISOString().slice(0, 10), '1600-01-01');
  let wrong = 0;
  for (let day = first; day <= last; day++) {
    if (parseDate(new Date(day * 86_400_000).toISOString().slice(0, 10)) !== day) wrong++;
  }
  t.equal(wrong, 0, `${last - first + 1} days round-trip`);
  for (const text of ['2023-02-29', '1900-02-29', '2026-04-31', '2026-06-31', '2026-13-01', '2026-00-10', '2026-01-00', '2026-01-32']) {
    t.equal(parseDate(text), undefined, `${text} is not a date`);
  }
  t.equal(parseDate('2000-02-29'), 11_016, 'leap day of a century divisible by 400');
});

t.test('parseEventTimestamp agrees with the grammar of event timestamps', async (t) => {
  // The oracle: the strict form by regular expression, its value by the general parser.
  const strict = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?Z$/;
  const oracle = (s: string) => (strict.test(s) ? parseTimestamp(s) : undefined);
  const pad = (n: number, w: number) => String(n).padStart(w, '0');
  const candidate = fc
    .record({
      y: fc.integer({ min: 0, max: 9999 }),
      mo: fc.integer({ min: 0, max: 13 }),
      d: fc.integer({ min: 0, max: 32 }),
      h: fc.integer({ min: 0, max: 25 }),
      mi: fc.integer({ min: 0, max: 61 }),
      s: fc.integer({ min: 0, max: 61 }),
      frac: fc.option(fc.stringMatching(/^[0-9]{0,7}$/), { nil: undefined }),
      zone: fc.constantFrom('Z', 'Z', 'Z', '', 'z', '+00:00'),
      sep: fc.constantFrom('T', 'T', 'T', ' ', 't'),
    })
    .map(({ y, mo, d, h, mi, s, frac, zone, sep }) =>
      `${pad(y, 4)}-${pad(mo, 2)}-${pad(d, 2)}${sep}${pad(h, 2)}:${pad(mi, 2)}:${pad(s, 2)}${frac === undefined ? '' : `.${frac}`}${zone}`,
    );
  const mutated = fc.tuple(candidate, fc.nat(), fc.string({ maxLength: 2 })).map(([s, at, insert]) => {
    const i = at % (s.length + 1);
    return s.slice(0, i) + insert + s.slice(i + (insert.length > 0 ? 1 : 0));
  });
  let valid = 0;
  fc.assert(
    fc.property(fc.oneof(candidate, mutated, fc.string({ maxLength: 30 })), (s) => {
      const expected = oracle(s);
      if (expected !== undefined) valid++;
      return parseEventTimestamp(s) === expected;
    }),
    { numRuns: 20_000 },
  );
  t.ok(valid > 1000, `${valid} valid timestamps among the cases`);
  t.equal(parseEventTimestamp('2026-09-01T09:00:00.5Z'), parseTimestamp('2026-09-01T09:00:00.500000Z'));
});
