/**
 * Where an import keeps its checked events between the check and the
 * append: lines written once, then read back once in order. In memory for
 * small imports; in a file for big ones, so an import's memory does not
 * grow with its file.
 */
import { randomUUID } from 'node:crypto';
import { closeSync, openSync, readdirSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { fileLines } from './lines.js';

export interface Spool {
  /** One line, without a line break (JSON.stringify's output never has one). */
  write(line: string): void;
  /** Every line written, in order (writing ends with the first call). */
  lines(): Iterable<string>;
  /** Forget the lines (a file spool's file is removed). */
  dispose(): void;
}

export function memorySpool(): Spool {
  let lines: string[] = [];
  return {
    write: (line) => void lines.push(line),
    lines: () => lines,
    dispose: () => void (lines = []),
  };
}

/** Bytes gathered before a write to the file. */
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
export function fileSpool(dir: string): Spool {
  for (const name of readdirSync(dir)) {
    const pid = SPOOL.exec(name)?.[1];
    if (pid !== undefined && !running(Number(pid))) rmSync(join(dir, name), { force: true });
  }
  const path = join(dir, `import-${process.pid}-${randomUUID()}.spool`);
  let fd: number | undefined = openSync(path, 'wx', 0o600);
  let pending: string[] = [];
  let pendingBytes = 0;
  const flush = () => {
    if (fd === undefined || pending.length === 0) return;
    writeSync(fd, pending.join(''));
    pending = [];
    pendingBytes = 0;
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
      pending.push(line, '\n');
      pendingBytes += line.length + 1;
      if (pendingBytes >= BUFFER) flush();
    },
    lines() {
      close();
      return fileLines(path);
    },
    dispose() {
      close();
      rmSync(path, { force: true });
    },
  };
}
