/**
 * Where an import keeps its checked events between the check and the
 * append: items written once (as JSON, made where the lines are parsed),
 * then read back once in order. In memory for small imports; in a file (a
 * JSON line each) for big ones, so an import's memory does not grow with
 * its file.
 */
import { randomUUID } from 'node:crypto';
import { closeSync, openSync, readdirSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { fileLines } from './lines.js';

export interface Spool<T> {
  /** An item, as JSON (one line: JSON.stringify never writes a line break). */
  write(json: string): void;
  /** Every item written, in order (writing ends with the first call). */
  items(): Iterable<T>;
  /** Forget the items (a file spool's file is removed). */
  dispose(): void;
}

export function memorySpool<T>(): Spool<T> {
  let items: string[] = [];
  return {
    write: (json) => void items.push(json),
    *items() {
      for (const json of items) yield JSON.parse(json) as T;
    },
    dispose: () => void (items = []),
  };
}

/** Bytes gathered before a write to the file. */
const BUFFER = 4 * 1024 * 1024;
const LINE_BREAK = 0x0a;

const SPOOL = /^import-(\d+)-[0-9a-f-]+\.spool$/;

/** Whether a process with this id runs (on this machine). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * A spool in a new file in `dir`, removed by dispose. A killed import
 * leaves its file behind: the next file spool in `dir` removes those of
 * processes that no longer run.
 */
export function fileSpool<T>(dir: string): Spool<T> {
  for (const name of readdirSync(dir)) {
    const pid = SPOOL.exec(name)?.[1];
    if (pid !== undefined && !running(Number(pid))) rmSync(join(dir, name), { force: true });
  }
  const path = join(dir, `import-${process.pid}-${randomUUID()}.spool`);
  let fd: number | undefined = openSync(path, 'wx', 0o600);
  // Lines go into a buffer as they come (no string joined from them), written to the file when it is full.
  let buffer = Buffer.allocUnsafe(BUFFER);
  let used = 0;
  const flush = () => {
    if (fd === undefined || used === 0) return;
    writeSync(fd, buffer, 0, used);
    used = 0;
  };
  const close = () => {
    if (fd === undefined) return;
    flush();
    closeSync(fd);
    fd = undefined;
  };
  return {
    write(line) {
      if (fd === undefined) throw new Error('the spool is no longer written');
      // A UTF-16 code unit is at most 3 bytes of UTF-8: room for that and the line break.
      const most = 3 * line.length + 1;
      if (used + most > buffer.length) {
        flush();
        if (most > buffer.length) buffer = Buffer.allocUnsafe(most);
      }
      used += buffer.write(line, used);
      buffer[used++] = LINE_BREAK;
    },
    *items() {
      close();
      for (const line of fileLines(path)) yield JSON.parse(line) as T;
    },
    dispose() {
      close();
      rmSync(path, { force: true });
    },
  };
}
