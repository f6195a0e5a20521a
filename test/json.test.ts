import fc from 'fast-check';
import t from 'tap';
import { str, text } from '../src/resources/json.js';

t.test('strings are written as JSON.stringify writes them, escapes and lone surrogates included', async (t) => {
  const anyString = fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' }), fc.constantFrom('"', '\\', '\u0000', '\u001f', '\u2028', '\ud800', '\udfff', '😀', ''));
  fc.assert(
    fc.property(anyString, (value) => {
      const expected = JSON.stringify(value);
      // text() twice: made, then kept.
      return str(value) === expected && text(value) === expected && text(value) === expected;
    }),
    { numRuns: 5000, seed: 3 },
  );
  t.equal(str(null), 'null');
  t.equal(text(null), 'null');
});
