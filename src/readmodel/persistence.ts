/**
 * The read model on disk, as of a checkpoint (the log position it
 * reflects):
 *
 * - a snapshot: every record, by kind, in columnar chunks
 *   (snapshot-codec.ts), written whole after a replay and at a start-up
 *   that found a long journal;
 * - a journal: the records changed since the snapshot, under [kind, id]
 *   (null for a deleted one), written with the checkpoint in one LMDB
 *   transaction per batch of events, so that records and checkpoint never
 *   disagree.
 *
 * - the tables' sorted indexes (and symbol codes) as of the snapshot, so
 *   that a start-up takes them instead of sorting every row again.
 * - the change feed (change-feed.ts): under [institution, commit, prepare]
 *   the id of the record the event is about, when it occurred and its type
 *   (encoded by feed-codec.ts; institutions by codes, in `feed-institutions`);
 *   written with the journal (a snapshot leaves it as it is), and by a
 *   replay as it goes, before its snapshot.
 *
 * Loading reads the tables' symbol codes, the snapshot, its indexes, then
 * the journal over them.
 */
import { rmSync } from 'node:fs';
import { open, type Database, type RootDatabase } from 'lmdb';
import { lmdbFileProblem, MAP_SIZE } from '../lmdb-file.js';
import type { Change } from '../../projections/projection.js';
import type { AnyRecord, Kind } from '../../projections/records.js';
import { type Position, startOfLog } from '../eventstore/port.js';
import type { FeedEntry, FeedPosition, FeedStore } from './change-feed.js';
import { decodeFeedBlock, feedBlock, feedBlocks, feedEnd, feedKey, feedStart } from './feed-codec.js';
import type { Persisted, SavedTableOf, SnapshotChunk, TableToSaveOf } from './model.js';
import type { Stored } from './packed-times.js';
import { decodeStoredChunk, decodeTable, encodeChunksInPieces, encodeTableInPieces, PartsMemory, Room } from './snapshot-codec.js';
import { unshared } from '../big-arrays.js';

/** The journal's key for msgpackr's shared record structures (an entry of its own in the journal's database). */
const SHARED_STRUCTURES = Symbol.for('structures');

/**
 * Every record of a model, by kind: as their projections made them, or as the model stores them (ReadModel.byKind;
 * a snapshot holds them as made either way).
 */
export type SnapshotRecords = Iterable<[Kind, Iterable<AnyRecord | Stored<AnyRecord>>]>;

/** See `ReadModelStore.snapshotWriter`. */
export interface SnapshotWriter {
  table(kind: Kind, institution: string, buffer: Buffer): Promise<unknown>;
  chunk(kind: Kind, buffer: Buffer, records: number): Promise<unknown>;
  end(checkpoint: Position): Promise<unknown>;
}

/** A table of a snapshot, encoded. */
export interface EncodedTable {
  readonly kind: Kind;
  readonly institution: string;
  /** The only view of its memory, unless the snapshot is packed into memory used again (see encodeSnapshot). */
  readonly buffer: Buffer<ArrayBuffer>;
}

/** A snapshot's tables and records, encoded (as they are asked for): what `replaceSnapshot` writes. */
export interface EncodedSnapshot {
  /** `undefined` between pieces of the work of encoding them: where the writer may let other work run. */
  readonly tables: Iterable<EncodedTable | undefined>;
  /** Each kind's chunks in order, with the number of records each holds (`undefined` between pieces, as `tables`). */
  readonly chunks: Iterable<{ readonly kind: Kind; readonly buffer: Buffer; readonly records: number } | undefined>;
  /** Where the parts are packed into memory used again: told that every part given so far is written. */
  readonly written?: () => void;
}

/**
 * Encode every record of a model (by kind) and its tables, as
 * `ReadModel.byKind()` and `tablesToSave()` give them: lazily, a piece at a
 * time as they are written (read once). With `reuseMemory`, the parts are
 * packed into memory used again once they are written (`written`: see
 * PartsMemory); else each table into memory of its own (which can be
 * transferred to another thread).
 */
export function encodeSnapshot(records: SnapshotRecords, tables: Iterable<TableToSaveOf | undefined>, reuseMemory = false): EncodedSnapshot {
  // The memory every table's arrays, then every chunk's columns, are made in, in turn.
  const room = new Room();
  const memory = reuseMemory ? new PartsMemory() : undefined;
  return { tables: encodeTables(tables, room, memory), chunks: encodeRecords(records, room, memory), written: memory && (() => memory.recycle()) };
}

function* encodeTables(tables: Iterable<TableToSaveOf | undefined>, room: Room, memory: PartsMemory | undefined): Iterable<EncodedTable | undefined> {
  for (const toSave of tables) {
    if (toSave === undefined) yield undefined;
    else yield { kind: toSave.kind, institution: toSave.institution, buffer: yield* encodeTableInPieces(toSave.table, room, memory) };
  }
}

function* encodeRecords(records: SnapshotRecords, room: Room, memory: PartsMemory | undefined): Iterable<{ kind: Kind; buffer: Buffer; records: number } | undefined> {
  for (const [kind, list] of records) {
    for (const chunk of encodeChunksInPieces(list, room, memory, kind)) yield chunk && { kind, buffer: chunk.buffer, records: chunk.records };
  }
}

/**
 * Bump when projections change what they store, or the read model's layout changes: an older read model is then
 * rebuilt from the log (and a version that finds a newer one rebuilds it its own way). 11: a snapshot in either of
 * two places (`snapshotSlot`), which version 10 would not look for.
 */
export const READ_MODEL_VERSION = 11;

interface Meta {
  checkpoint?: { commit: string; prepare: string };
  version?: number;
  /** Records in the snapshot. */
  snapshotRecords?: number;
  /** Which of the two places for a snapshot holds the current one (absent: 0, as before there were two). */
  snapshotSlot?: SnapshotSlot;
}

/**
 * A snapshot and its tables live in one of two pairs of databases: a new
 * one is written beside the current one, then made current in a
 * transaction of its own.
 */
type SnapshotSlot = 0 | 1;

const SLOT_NAMES: Readonly<Record<SnapshotSlot, { snapshot: string; tables: string }>> = {
  0: { snapshot: 'snapshot', tables: 'tables' },
  1: { snapshot: 'snapshot-1', tables: 'tables-1' },
};
interface SlotDatabases {
  readonly snapshot: Database<Buffer, [Kind, number]>;
  readonly tables: Database<Buffer, [Kind, string]>;
}

/** What a journal entry counts for in `readSinceOpen` (its size is not known once decoded): about a record's. */
const JOURNAL_ENTRY_BYTES = 512;

/** Whether two keys (arrays of strings and numbers) are the same. */
function sameKey(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a.length === b.length && a.every((part, i) => part === b[i]);
}

export class ReadModelStore implements FeedStore {
  /**
   * Bytes of a snapshot being written beside the current one that are
   * queued before their transaction is awaited: what a new snapshot holds
   * in memory (its encoded parts, and LMDB's dirty pages), however large.
   */
  static snapshotPieceBytes = 16 * 2 ** 20;
  /** Bytes a load reads before it lets go of the pages it mapped (letGoOfReadPages). */
  static loadReleaseBytes = 256 * 2 ** 20;

  private root!: RootDatabase;
  private slots!: Readonly<Record<SnapshotSlot, SlotDatabases>>;
  /** Which slot holds the current snapshot. */
  private slot: SnapshotSlot = 0;
  /** Bytes of the snapshot, its tables and journal read since the environment was opened (about, for the journal). */
  private readSinceOpen = 0;
  private journal!: Database<AnyRecord | null, [Kind, string]>;
  private meta!: Database<Meta[keyof Meta], keyof Meta>;
  private feed!: Database<Buffer, Buffer>;
  /** Institution id → its code in the feed's keys (1, 2, …; assigned as an institution's first entry is written). */
  private feedInstitutions!: Database<number, string>;
  /** The codes known to this process (a code, once written, never changes until the feed is cleared). */
  private institutionCodes = new Map<string, number>();

  private constructor(private readonly path: string) {
    this.openEnv();
  }

  /**
   * Open the read model at `path`. One whose file LMDB cannot safely map
   * (truncated, overwritten) is dropped first — it is rebuilt from the log —
   * and `onDropped` is told why.
   */
  static open(path: string, onDropped?: (problem: string) => void): ReadModelStore {
    const problem = lmdbFileProblem(path);
    if (problem !== undefined) {
      onDropped?.(problem);
      rmSync(path, { recursive: true, force: true });
    }
    return new ReadModelStore(path);
  }

  private openEnv(): void {
    this.root = open({ path: this.path, mapSize: MAP_SIZE, compression: false });
    const slot = (names: { snapshot: string; tables: string }): SlotDatabases => ({
      snapshot: this.root.openDB<Buffer, [Kind, number]>({ name: names.snapshot, encoding: 'binary' }),
      tables: this.root.openDB<Buffer, [Kind, string]>({ name: names.tables, encoding: 'binary' }),
    });
    this.slots = { 0: slot(SLOT_NAMES[0]), 1: slot(SLOT_NAMES[1]) };
    // Records as msgpack maps, not records of shared structures: a new structure is saved in a synchronous
    // transaction, which waits for lmdb-js's write thread to commit the batch before it (220-250 ms, a stall of every
    // request, once per record shape after each journal fold: the longest in a live import's server profile). Maps
    // take 45 % more bytes. The structures key stays, for the entries an earlier version wrote with structures.
    // (`useRecords` is msgpackr's, which lmdb-js passes on; its types do not list it.)
    const journal = { name: 'journal', sharedStructuresKey: SHARED_STRUCTURES, useRecords: false };
    this.journal = this.root.openDB<AnyRecord | null, [Kind, string]>(journal);
    this.meta = this.root.openDB<Meta[keyof Meta], keyof Meta>({ name: 'meta' });
    this.feed = this.root.openDB<Buffer, Buffer>({ name: 'feed', keyEncoding: 'binary', encoding: 'binary' });
    this.feedInstitutions = this.root.openDB<number, string>({ name: 'feed-institutions' });
    this.slot = (this.meta.get('snapshotSlot') as SnapshotSlot | undefined) ?? 0;
  }

  /** The current snapshot's databases. */
  private get current(): SlotDatabases {
    return this.slots[this.slot];
  }

  /**
   * Close and open the environment again: after a full load, its pages
   * stay mapped into this process (and count in its resident memory) until
   * the map is let go of. Writes go on as before.
   */
  async reopen(): Promise<void> {
    await this.root.close();
    this.openEnv();
    this.readSinceOpen = 0;
  }

  /** The version of the projections the stored records were made by (undefined: none stored). */
  version(): number | undefined {
    return this.meta.get('version') as number | undefined;
  }

  /** Whether the stored records were made by the current projections. */
  isCurrent(): boolean {
    return this.meta.get('version') === READ_MODEL_VERSION;
  }

  checkpoint(): Position {
    const stored = this.meta.get('checkpoint') as Meta['checkpoint'];
    return stored ? { commit: BigInt(stored.commit), prepare: BigInt(stored.prepare) } : startOfLog;
  }

  /**
   * How many records the snapshot holds, and how many changes the journal holds over it: LMDB keeps the journal's
   * entry count (O(1), asked after every batch), which includes the entry msgpackr keeps its shared structures in.
   */
  sizes(): { snapshot: number; journal: number } {
    const entries = (this.journal.getStats() as { entryCount: number }).entryCount;
    // (Its key is a symbol, outside the journal's key type.)
    const journal = entries - ((this.journal as unknown as Database<unknown, symbol>).doesExist(SHARED_STRUCTURES) ? 1 : 0);
    return { snapshot: (this.meta.get('snapshotRecords') as number | undefined) ?? 0, journal };
  }

  /** The snapshot's records a chunk at a time, by kind, each kind in the order it was written: as the model stores them, or as made. */
  *snapshotChunks(): Iterable<SnapshotChunk> {
    for (const { key, value } of this.paged(() => this.current.snapshot, 4)) {
      this.readSinceOpen += value.length;
      yield { kind: key[0], ...decodeStoredChunk(key[0], value) };
    }
  }

  /** The tables' indexes and symbol codes as saved with the snapshot. */
  *savedTables(): Iterable<SavedTableOf> {
    for (const { key, value } of this.paged(() => this.current.tables, 1)) {
      this.readSinceOpen += value.length;
      yield { kind: key[0], institution: key[1], table: decodeTable(value) };
    }
  }

  /** The changes since the snapshot (a deleted record's is null). */
  *journalChanges(): Iterable<Change> {
    for (const { key, value } of this.paged(() => this.journal, 1000)) {
      this.readSinceOpen += JOURNAL_ENTRY_BYTES;
      yield { kind: key[0], id: key[1], record: value } as Change;
    }
  }

  /**
   * Everything `ReadModel.loadPersisted` takes, read from disk as it goes
   * (the tables first), and what to await between slices of a load (see
   * letGoOfReadPages).
   */
  persisted(): Persisted {
    return { tables: this.savedTables(), chunks: this.snapshotChunks(), journal: this.journalChanges(), between: () => this.letGoOfReadPages() };
  }

  /**
   * A database's entries in key order, read `pageSize` at a time: no
   * cursor stays open between pages (keys and values are copies), so that the
   * environment can be opened again between any two entries (`db` gives
   * the database as it then is).
   */
  private *paged<K extends (string | number)[], V>(db: () => Database<V, K>, pageSize: number): Iterable<{ key: K; value: V }> {
    let after: K | undefined;
    for (;;) {
      const page: { key: K; value: V }[] = [];
      // (No `start` at all for the first page: lmdb-js takes `start: undefined` as a key, and then lists the journal's
      // entry of shared structures too.)
      for (const entry of db().getRange(after === undefined ? { snapshot: false } : { start: after, snapshot: false })) {
        if (after !== undefined && sameKey(entry.key, after)) continue;
        // (lmdb-js may hand out one entry object, its fields set anew at each step.)
        page.push({ key: entry.key, value: entry.value });
        if (page.length === pageSize) break;
      }
      if (page.length === 0) return;
      yield* page;
      after = page[page.length - 1]!.key;
    }
  }

  /**
   * Between slices of a load: once it has read `loadReleaseBytes` since the
   * environment was opened, open it again, letting go of the pages it
   * mapped. They count in the process's resident memory until then: a
   * restart over 2.1M records peaked 0.5 GB above where it settled once
   * loaded; letting go every 256 MB, VmHWM 2,127–2,235 → 1,946–2,011 MB
   * (every 128 MB, about 0.43 GB less, but each let-go cost 57–69 ms: ready
   * 0.7 s later). Whether it did.
   */
  async letGoOfReadPages(): Promise<boolean> {
    if (this.readSinceOpen < ReadModelStore.loadReleaseBytes) return false;
    await this.reopen();
    return true;
  }

  /**
   * Write a batch of changes to the journal, its change feed entries, and the checkpoint, atomically. Queued as
   * lmdb-js's asynchronous puts, which it commits in one transaction (all those of one event turn) on its own
   * thread, so this thread only encodes them: inside a transaction callback, which runs on this thread, the
   * B-tree work of a 1,000-event batch held a server's requests for up to 300 ms during a live import.
   */
  async write(changes: Iterable<Change>, feed: readonly FeedEntry[], checkpoint: Position): Promise<void> {
    await this.codeInstitutions(feed);
    // No await until every put is queued: one event turn, one transaction.
    for (const { kind, id, record } of changes) void this.journal.put([kind, id], record);
    void this.putFeed(feed);
    await this.putCheckpoint(checkpoint);
  }

  /**
   * Write change feed entries (a replay's, as it goes), in the background:
   * resolves once they are committed. The replay's snapshot, written after,
   * makes them count (a read model without one is cleared at start).
   */
  async appendFeed(entries: readonly FeedEntry[]): Promise<void> {
    await this.codeInstitutions(entries);
    // In a transaction callback (on this thread, between the replay's messages): a rebuild of 2.77M events took
    // 34.7–37.5 s so, and 40.0–41.1 s with its entries queued for lmdb-js's thread, which competes with the workers.
    await this.root.transaction(() => void this.putFeed(entries));
  }

  /**
   * Give each institution of these entries new to the change feed its code, in a transaction of its own (read
   * there: no other writer of this read model can have given the number away meanwhile; a code with no entries
   * yet is harmless), and know them in this process once it has committed.
   */
  private async codeInstitutions(entries: readonly FeedEntry[]): Promise<void> {
    const unknown = new Set<string>();
    for (const { institution } of entries) if (!this.institutionCodes.has(institution)) unknown.add(institution);
    if (unknown.size === 0) return;
    const assigned = new Map<string, number>();
    await this.root.transaction(() => {
      for (const institution of unknown) {
        let code = this.feedInstitutions.get(institution);
        if (code === undefined) {
          code = this.feedInstitutions.getKeysCount() + 1;
          this.feedInstitutions.put(institution, code);
        }
        assigned.set(institution, code);
      }
    });
    for (const [institution, code] of assigned) this.institutionCodes.set(institution, code);
  }

  /**
   * Put the entries' blocks (their institutions coded): queued, or in the transaction whose callback this runs in.
   * The promise of the last put, which the others share.
   */
  private putFeed(entries: readonly FeedEntry[]): Promise<boolean> | undefined {
    let last: Promise<boolean> | undefined;
    for (const [institution, block] of feedBlocks(entries)) last = this.feed.put(feedKey(this.institutionCodes.get(institution)!, block[0]!), feedBlock(block));
    return last;
  }

  feedAfter(institution: string, after: FeedPosition | undefined, limit: number): FeedEntry[] {
    let code = this.institutionCodes.get(institution);
    if (code === undefined) {
      code = this.feedInstitutions.get(institution);
      if (code === undefined) return [];
      this.institutionCodes.set(institution, code);
    }
    const entries: FeedEntry[] = [];
    const start = feedKey(code, after ?? { commit: 0, prepare: 0 });
    // From the block that holds `after` (the last to begin at or before it), or the institution's first.
    let first: Buffer = start;
    for (const key of this.feed.getKeys({ start, end: feedStart(code), reverse: true, limit: 1 })) first = key;
    for (const { value } of this.feed.getRange({ start: first, end: feedEnd(code) })) {
      for (const entry of decodeFeedBlock(value)) {
        if (after && (entry.commit < after.commit || (entry.commit === after.commit && entry.prepare <= after.prepare))) continue;
        if (entries.length === limit) return entries;
        entries.push({ institution, ...entry });
      }
    }
    return entries;
  }

  /**
   * Replace snapshot and journal by a snapshot of these records (every
   * record of the model, by kind) and tables, at this checkpoint (see
   * replaceSnapshot): for a model that nothing else writes to meanwhile.
   */
  writeSnapshot(records: SnapshotRecords, tables: Iterable<TableToSaveOf | undefined>, checkpoint: Position): Promise<void> {
    return this.replaceSnapshot(encodeSnapshot(records, tables, true), checkpoint);
  }

  /**
   * Replace snapshot and journal by this encoded snapshot, at this
   * checkpoint. The new snapshot is written beside the current one in
   * transactions of about `snapshotPieceBytes`, each committed before the
   * next part is encoded (so a snapshot of any size holds that much memory,
   * not its whole size: as one transaction, the fold after a live import
   * took a server's peak from 3.24 to 4.10 GB), then made current, the journal
   * emptied and the checkpoint set in one transaction. Until then the
   * current snapshot and journal are as they were: a failure or a crash
   * part-way loses nothing (the half-written slot is cleared before the
   * next is written there). `between` runs after each part is queued and
   * between the pieces a part is encoded in (the projector lets requests
   * in there); the parts' encoding and the puts
   * run on this thread, the commits on lmdb-js's.
   */
  async replaceSnapshot(encoded: EncodedSnapshot, checkpoint: Position, between: () => Promise<void> | void = () => {}): Promise<void> {
    const next: SnapshotSlot = this.slot === 0 ? 1 : 0;
    const beside = this.slots[next];
    await Promise.all([beside.snapshot.clearAsync(), beside.tables.clearAsync()]);
    const into = this.writerInto(beside);
    let queued = 0;
    let last: Promise<unknown> = Promise.resolve();
    /** Queue a part's put; once `snapshotPieceBytes` are queued (or `alone`), wait until they are written. */
    const queue = async (put: Promise<unknown>, bytes: number, alone = false) => {
      last = put;
      queued += bytes;
      if (alone || queued >= ReadModelStore.snapshotPieceBytes) {
        await last;
        queued = 0;
        encoded.written?.();
      }
      await between();
    };
    // Each table written before the next is encoded, so that each finds the memory of those before it free (with the
    // largest first, see tablesToSave: at a million shifts one block of 69 MB, where there were three of 121 MB).
    for (const table of encoded.tables) {
      if (table === undefined) await between();
      else await queue(into.table(table.kind, table.institution, table.buffer), table.buffer.length, true);
    }
    for (const chunk of encoded.chunks) {
      if (chunk === undefined) await between();
      else await queue(into.chunk(chunk.kind, chunk.buffer, chunk.records), chunk.buffer.length);
    }
    await last;
    const old = this.current;
    await this.root.transaction(() => {
      void this.meta.put('snapshotSlot', next);
      void this.meta.put('snapshotRecords', into.records());
      void this.putCheckpoint(checkpoint);
      this.journal.clearSync();
    });
    this.slot = next;
    // The old snapshot's pages are free for the next one.
    await Promise.all([old.snapshot.clearAsync(), old.tables.clearAsync()]);
  }

  /**
   * Puts a snapshot's tables and chunks as they come (a kind's chunks are
   * numbered in that order, and loaded in it), then its record count and
   * checkpoint (`end`). Puts queued in one event turn share a transaction;
   * a replay awaits each (its workers hand their snapshots over piece by
   * piece, never whole beside their models) into a read model it cleared
   * (the current slot, then empty):
   * until `end` the read model has no checkpoint, and a start-up finding it
   * so clears it and replays the log, as after any interrupted replay.
   */
  snapshotWriter(): SnapshotWriter {
    const into = this.writerInto(this.current);
    return {
      table: into.table,
      chunk: into.chunk,
      end: (checkpoint) => {
        void this.meta.put('snapshotRecords', into.records());
        return this.putCheckpoint(checkpoint);
      },
    };
  }

  /** Puts of a snapshot's tables and chunks into these databases (a kind's chunks numbered in the order they come). */
  private writerInto(slot: SlotDatabases): Omit<SnapshotWriter, 'end'> & { records(): number } {
    const chunkNumbers = new Map<Kind, number>();
    let records = 0;
    return {
      table: (kind, institution, buffer) => slot.tables.put([kind, institution], unshared(buffer)),
      chunk: (kind, buffer, count) => {
        const number = chunkNumbers.get(kind) ?? 0;
        chunkNumbers.set(kind, number + 1);
        records += count;
        return slot.snapshot.put([kind, number], unshared(buffer));
      },
      records: () => records,
    };
  }

  /** Queue the checkpoint's puts: the promise of the last, which the others share. */
  private putCheckpoint(checkpoint: Position): Promise<boolean> {
    void this.meta.put('checkpoint', { commit: checkpoint.commit.toString(), prepare: checkpoint.prepare.toString() });
    return this.meta.put('version', READ_MODEL_VERSION);
  }

  /** Drop every record and the checkpoint (before a replay of the whole log). */
  async clear(): Promise<void> {
    await this.root.transaction(() => {
      // Records as read model version 3 kept them, if this file has them: their pages are free again.
      this.root.openDB({ name: 'records' }).dropSync();
      for (const { snapshot, tables } of Object.values(this.slots)) {
        snapshot.clearSync();
        tables.clearSync();
      }
      this.journal.clearSync();
      this.feed.clearSync();
      this.feedInstitutions.clearSync();
      this.institutionCodes.clear();
      this.meta.clearSync();
    });
    this.slot = 0;
  }

  async close(): Promise<void> {
    await this.root.close();
  }
}
