/**
 * The lines of a text file, read in chunks: files of any size (a whole
 * file as one string is limited to about 512 MB by V8).
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';

const CHUNK = 8 * 1024 * 1024;

/** Every line of the file (without its '\n'), in order. */
export function* fileLines(path: string, chunkBytes = CHUNK): Generator<string> {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.allocUnsafe(chunkBytes);
    // Decodes UTF-8 across chunk boundaries.
    const decoder = new StringDecoder('utf8');
    let rest = '';
    for (;;) {
      const read = readSync(fd, buffer, 0, chunkBytes, null);
      if (read === 0) break;
      const text = rest + decoder.write(buffer.subarray(0, read));
      const lines = text.split('\n');
      rest = lines.pop()!;
      yield* lines;
    }
    rest += decoder.end();
    if (rest !== '') yield rest;
  } finally {
    closeSync(fd);
  }
}
