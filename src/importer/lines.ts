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

const NEWLINE = 0x0a;
/** Bytes read at a time past a block's end, for the rest of its last line. */
const TAIL_READ = 64 * 1024;

/**
 * The lines of the file open as `fd` (of `size` bytes) that begin in the bytes [from, to), whole (the last may go on
 * past `to`): over blocks that tile the file, every line once, in order, as fileLines gives them. A worker reads
 * only its blocks (each read the whole file and used every `workers`-th batch of it).
 */
export function blockLines(fd: number, from: number, to: number, size: number): string[] {
  to = Math.min(to, size);
  if (from >= to) return [];
  // Read from the byte before the block (a line begins at `from` when that byte ends one; else after the block's first
  // line break): buffer[i] is the file's byte at `base + i`.
  const base = from === 0 ? 0 : from - 1;
  let buffer = Buffer.allocUnsafe(to - base + TAIL_READ);
  let end = readSync(fd, buffer, 0, to - base, base);
  /** The first line break in buffer[at, until), or -1. */
  const lineBreak = (at: number, until: number) => {
    const found = at >= until ? -1 : buffer.subarray(at, until).indexOf(NEWLINE);
    return found === -1 ? -1 : at + found;
  };
  let start = 0;
  if (from > 0) {
    const first = lineBreak(0, end);
    if (first === -1 || base + first + 1 >= to) return [];
    start = first + 1;
  }
  // The last line ends at the first line break at or past the block's last byte (or at the end of the file).
  let stop = lineBreak(Math.max(start, to - 1 - base), end);
  while (stop === -1 && base + end < size) {
    if (buffer.length - end < TAIL_READ) {
      const bigger = Buffer.allocUnsafe(buffer.length * 2);
      buffer.copy(bigger, 0, 0, end);
      buffer = bigger;
    }
    const read = readSync(fd, buffer, end, buffer.length - end, base + end);
    if (read === 0) break;
    stop = lineBreak(end, end + read);
    end += read;
  }
  if (stop === -1) stop = end;
  return buffer.toString('utf8', start, stop).split('\n');
}
