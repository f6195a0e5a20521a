/**
 * Where an import keeps its checked events between the check and the
 * append: written once, then read back once in order. In memory for small
 * imports; in a file for big ones, so an import's memory does not grow with
 * its file. An event's data is kept as packed (packed-data.ts): the append
 * writes those bytes to the log as they are, with nothing to parse.
 */
import { randomUUID } from 'node:crypto';
import { closeSync, openSync, readdirSync, readSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** An event as spooled: checked, with its stream and its revision in it (as the import counts them), its data packed. */
export interface SpooledEvent {
  readonly stream: string;
  readonly id: string;
  readonly type: string;
  readonly revision: number;
  readonly data: Uint8Array;
}

export interface Spool {
  write(event: SpooledEvent): void;
  /**
   * Every event written, in order, from the `from`th on (0 unless given); writing ends with the first call, and it
   * may be called again. A file spool's `data` is good until the next is taken.
   */
  items(from?: number): Iterable<SpooledEvent>;
  /** Forget the events (a file spool's file is removed). */
  dispose(): void;
  /** A file spool's file, written whole (writing ends here, as with `items`): for another thread to read with `spooled`. */
  written?(): string;
}

export function memorySpool(): Spool {
  let items: SpooledEvent[] = [];
  return {
    write: (event) => void items.push(event),
    items: (from = 0) => (from === 0 ? items : items.slice(from)),
    dispose: () => void (items = []),
  };
}

/** Bytes gathered before a write to the file, and read at a time. */
const BUFFER = 4 * 1024 * 1024;
/** A record's head: its data's length (4 bytes), its stream's, id's and type's (2 bytes each), then its revision (4 bytes). */
const HEAD = 14;

/** A spool's file, or a summary of the log being written (log-summary.ts): named after the process writing it. */
const LEFT_BY_IMPORT = /^import-(\d+)-[0-9a-f-]+\.(spool|summary)$/;

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
 * leaves its file behind (or the summary of the log it was writing): the
 * next file spool in `dir` removes those of processes that no longer run.
 * A record is its head (HEAD), then the stream, id and type in UTF-8, then
 * the data.
 */
export function fileSpool(dir: string): Spool {
  for (const name of readdirSync(dir)) {
    const pid = LEFT_BY_IMPORT.exec(name)?.[1];
    if (pid !== undefined && !running(Number(pid))) rmSync(join(dir, name), { force: true });
  }
  const path = join(dir, `import-${process.pid}-${randomUUID()}.spool`);
  let fd: number | undefined = openSync(path, 'wx', 0o600);
  // Records go into a buffer as they come, written to the file when it is full.
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
    written() {
      close();
      return path;
    },
    write({ stream, id, type, revision, data }) {
      if (fd === undefined) throw new Error('the spool is no longer written');
      // A UTF-16 code unit is at most 3 bytes of UTF-8.
      const most = HEAD + 3 * (stream.length + id.length + type.length) + data.length;
      if (used + most > buffer.length) {
        flush();
        if (most > buffer.length) buffer = Buffer.allocUnsafe(most);
      }
      let at = used + HEAD;
      const streamBytes = buffer.write(stream, at);
      at += streamBytes;
      const idBytes = buffer.write(id, at);
      at += idBytes;
      const typeBytes = buffer.write(type, at);
      at += typeBytes;
      buffer.set(data, at);
      buffer.writeUInt32LE(data.length, used);
      buffer.writeUInt16LE(streamBytes, used + 4);
      buffer.writeUInt16LE(idBytes, used + 6);
      buffer.writeUInt16LE(typeBytes, used + 8);
      buffer.writeUInt32LE(revision, used + 10);
      used = at + data.length;
    },
    *items(from = 0) {
      close();
      yield* spooled(path, from);
    },
    dispose() {
      close();
      rmSync(path, { force: true });
    },
  };
}

/** The records of a spool's file, in order, from the `from`th on (each `data` a view of the buffer read into, good until the next). */
export function* spooled(path: string, from = 0): Generator<SpooledEvent> {
  const fd = openSync(path, 'r');
  try {
    let buffer = Buffer.allocUnsafe(BUFFER);
    /** Bytes of the buffer read and not yet taken: [at, to). */
    let at = 0;
    let to = 0;
    /** Read more, keeping the bytes not taken (moved to the start): at least `need` bytes in all, if the file has them. */
    const fill = (need: number): boolean => {
      if (need > buffer.length) {
        const bigger = Buffer.allocUnsafe(need);
        buffer.copy(bigger, 0, at, to);
        buffer = bigger;
      } else buffer.copy(buffer, 0, at, to);
      to -= at;
      at = 0;
      while (to < need) {
        const read = readSync(fd, buffer, to, buffer.length - to, null);
        if (read === 0) return false;
        to += read;
      }
      return true;
    };
    for (let skip = from; ; ) {
      if (to - at < HEAD && !fill(HEAD)) {
        if (to > at) throw new Error(`${path}: the spool ends within a record`);
        return;
      }
      const dataBytes = buffer.readUInt32LE(at);
      const streamBytes = buffer.readUInt16LE(at + 4);
      const idBytes = buffer.readUInt16LE(at + 6);
      const typeBytes = buffer.readUInt16LE(at + 8);
      const size = HEAD + streamBytes + idBytes + typeBytes + dataBytes;
      if (to - at < size && !fill(size)) throw new Error(`${path}: the spool ends within a record`);
      if (skip > 0) {
        skip--;
        at += size;
        continue;
      }
      const revision = buffer.readUInt32LE(at + 10);
      let next = at + HEAD;
      const stream = buffer.toString('utf8', next, (next += streamBytes));
      const id = buffer.toString('utf8', next, (next += idBytes));
      const type = buffer.toString('utf8', next, (next += typeBytes));
      const data = buffer.subarray(next, next + dataBytes);
      at += size;
      yield { stream, id, type, revision, data };
    }
  } finally {
    closeSync(fd);
  }
}
