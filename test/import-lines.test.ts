/**
 * Import files are read line by line in chunks (a file of any size): lines
 * and multi-byte characters split across chunks come out whole.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { fileLines } from '../src/importer/lines.js';
import { tempDir } from './helpers.js';

t.test('lines split across chunks, multi-byte characters, a last line without newline', async (t) => {
  const temp = tempDir();
  t.teardown(temp.remove);
  const lines = ['{"a":"Zoë Ångström 🙂"}', '', 'plain', '€€€€€€€€', '🙂🙂🙂', 'last'];
  const file = join(temp.dir, 'x.ndjson');
  writeFileSync(file, lines.join('\n'));
  // Every chunk size from 1 byte up cuts lines and characters at every possible place.
  for (let chunk = 1; chunk <= 40; chunk++) t.same([...fileLines(file, chunk)], lines, `chunks of ${chunk} bytes`);
  writeFileSync(file, lines.join('\n') + '\n');
  t.same([...fileLines(file, 7)], lines, 'a trailing newline adds no line');
  writeFileSync(file, '');
  t.same([...fileLines(file)], [], 'an empty file has no lines');
});
