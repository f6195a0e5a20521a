/**
 * Where an import keeps its checked events between the check and the
 * append: items written once, then read back once in order. In memory for
 * small imports; in a file (a JSON line each) for big ones, so an import's
 * memory does not grow with its file.
 */
import { randomUUID } from 'node:crypto';
import { closeSync, openSync, readdirSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { fileLines } from './lines.js';

export interface Spool<T> {
  write(item: T): void;
  /** Every item written, in order (writing ends with the first call). */
  items(): Iterable<T>;
  /** Forget the items (a file spool's file is removed). */
  dispose(): void;
}

export function memorySpool<T>(): Spool<T> {
  let items: T[] = [];
  return {
    write: (item) => void items.push(item),
    items: () => items,
    dispose: () => void (items = []),
  };
}

/** Characters gathered before a write to the file. */
const BUFFER = 4 * 1024 * 1024;

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
  let pending: string[] = [];
  let pendingLength = 0;
  const flush = () => {
    if (fd === undefined || pending.length === 0) return;
    writeSync(fd, pending.join(''));
    pending = [];
    pendingLength = 0;
  };
  const close = () => {
    if (fd === undefined) return;
    flush();
    closeSync(fd);
    fd = undefined;
  };
  return {
    write(item) {
      if (fd === undefined) throw new Error('the spool is no longer written');
      // JSON.stringify never writes a line break: one item, one line.
      const line = JSON.stringify(item);
      pending.push(line, '\n');
      pendingLength += line.length + 1;
      if (pendingLength >= BUFFER) flush();
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
