/**
 * A look at an LMDB environment's data file before LMDB maps it: LMDB trusts
 * its file, and a truncated or overwritten one crashes the process (a bus
 * error or a segmentation fault) instead of failing an open. The two meta
 * pages are read: each must carry LMDB's magic number, and the file must hold
 * the root pages of the newer one's two databases — every read starts there.
 * (Not every page up to the last one it counts: LMDB may count pages it
 * allocated and freed again in one transaction, never written — a working
 * 1.4 GB log ended two pages short of that count.)
 */
import { closeSync, existsSync, fstatSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';

/** Where lmdb-js's meta page puts its fields (a 24-byte page header, then the meta). */
const MAGIC_AT = 0x18;
const PAGE_SIZE_AT = 0x30; // the free database's md_pad holds the page size
/** The two databases' descriptions (free pages, then the main one), 48 bytes each; a root page number 40 bytes into each. */
const DBS_AT = 0x30;
const DB_SIZE = 48;
const ROOT_IN_DB = 40;
const NO_PAGE = 0xffffffffffffffffn;
const TXN_AT = 0x98;
const MAGIC = 0xbeefc0de;

/**
 * The size of the address range every environment is mapped into, far beyond any file it will hold (64-bit
 * address space is plentiful; only the pages read take memory). lmdb-js otherwise starts at 128 KB and maps a
 * range twice the size each time the file outgrows it, and keeps every earlier mapping with the pages read
 * through it: a 1.05 GB log written by one import was resident as 2.5 GB of mapped pages (1.77M events), and a
 * server's log grew the same way under a live import.
 */
export const MAP_SIZE = 2 ** 38;

/**
 * How many free pages an environment loads from LMDB's free-page list into memory, and keeps there between
 * transactions (lmdb-js's `maxFreeSpaceToLoad` and `maxFreeSpaceToRetain`, which its `env.cpp` reads but its types do
 * not declare; its defaults are 50,000 and 75,000).
 * lmdb-js's LMDB checks the loaded pages against each other at every commit, in time that grows with the square of
 * their number, on its write thread. A log that another process has written in large transactions (an import) has
 * tens of thousands of free pages: a server then loaded up to 50,000 of them at its next append, and every append
 * after that spent 150-200 ms in that check, taking a core from the machine's two (a sites bulk-create after
 * 40,000 events appended by another process: p50 173 ms against 5.4 ms before them; with 10,000 loaded, 23 ms; with
 * these, 4.3 ms, and 3.1 ms after 200,000 events). A transaction that needs more pages than are loaded takes new ones
 * at the end of the file. For the log only: the read model has one writer, and its large values (snapshot chunks,
 * tables) need runs of adjacent free pages, which fewer loaded pages would find less often (its file growing instead;
 * not measured).
 */
export const FREE_PAGES = { maxFreeSpaceToLoad: 1_000, maxFreeSpaceToRetain: 2_000 } as const;

/** Looks taken before a file is called damaged (another process may be writing it: see below), and the pause between them. */
const LOOKS = 3;
const PAUSE_MS = 50;

/** Why the environment at `dir` cannot be opened safely, or undefined (also when it does not exist yet). */
export function lmdbFileProblem(dir: string): string | undefined {
  const file = join(dir, 'data.mdb');
  if (!existsSync(file)) return undefined;
  // Another process (serve, an import) may be committing to the file while it is looked at; a meta page read in
  // the middle of its write can be torn. Damage stays; a torn read does not: only a problem seen every time counts.
  let problem: string | undefined;
  for (let look = 0; look < LOOKS; look++) {
    problem = lookAt(file);
    if (problem === undefined) return undefined;
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, PAUSE_MS);
  }
  return problem;
}

function lookAt(file: string): string | undefined {
  const fd = openSync(file, 'r');
  try {
    const first = Buffer.alloc(4096);
    const read = readSync(fd, first, 0, first.length, 0);
    if (read === 0) return undefined; // made, never written: LMDB starts it afresh
    if (read < first.length) return `${file} is ${read} bytes: shorter than its first page`;
    if (first.readUInt32LE(MAGIC_AT) !== MAGIC) return `${file} is not an LMDB data file (no magic number in its first page)`;
    const pageSize = first.readUInt32LE(PAGE_SIZE_AT);
    if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) !== 0) return `${file} has an impossible page size (${pageSize})`;
    const second = Buffer.alloc(256);
    if (readSync(fd, second, 0, second.length, pageSize) < second.length) return `${file} is shorter than its two meta pages`;
    const metas = [first, second].filter((page) => page.readUInt32LE(MAGIC_AT) === MAGIC);
    const newest = metas.reduce((a, b) => (b.readBigUInt64LE(TXN_AT) > a.readBigUInt64LE(TXN_AT) ? b : a));
    const roots = [0, 1].map((db) => newest.readBigUInt64LE(DBS_AT + db * DB_SIZE + ROOT_IN_DB)).filter((root) => root !== NO_PAGE);
    const needed = roots.reduce((most, root) => Math.max(most, (Number(root) + 1) * pageSize), 2 * pageSize);
    // The size after the meta pages: a writer writes a transaction's pages before the meta page naming them, and a
    // size taken first could miss the pages of a commit made in between (a working log called truncated).
    const size = fstatSync(fd).size;
    if (size < needed) return `${file} is truncated: ${size} bytes, and its root pages end at ${needed}`;
    return undefined;
  } finally {
    closeSync(fd);
  }
}
