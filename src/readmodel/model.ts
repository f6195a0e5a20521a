import { randomBytes } from 'node:crypto';
/**
 * The in-memory read model: every record by kind and id (what projections
 * read), and for each searchable kind one table per institution with its
 * sorted indexes (what searches read). Requests only ever read from here.
 */
import type { Change } from '../../projections/projection.js';
import type { JsonView } from '../resources/json.js';
import type { AnyRecord, ApiKeyRecord, Kind, Records } from '../../projections/records.js';
import { kinds } from '../../projections/records.js';
import { Interner } from './intern.js';
import { ownCopy } from '../own-strings.js';
import { ShardedMap } from './sharded-map.js';
import { isPacked, pack, type Stored, unpack, unpackerOf, unpacked } from './packed-times.js';
import { runThrough } from './pieces.js';
import { type SavedTable, savedTableOf, Table, type TableSchema, type TableToSave } from './table.js';
import { uint32s } from '../big-arrays.js';

export interface TableDef<R> extends TableSchema<R> {
  /** Whether a record appears in lists and searches (default: always); given the record as stored (no times). */
  readonly include?: (record: Stored<R>) => boolean;
}

export type TableDefs = { readonly [K in Kind]?: TableDef<Records[K]> };

/** A table's indexes and symbol codes as saved with a snapshot. */
export interface SavedTableOf {
  readonly kind: Kind;
  readonly institution: string;
  readonly table: SavedTable;
}

/**
 * A table's indexes and symbol codes to be saved with a snapshot, made as they are written (Table.toSave); the lists
 * of them hold `undefined` between pieces of the work of making them (where a writer may let other work run).
 */
export interface TableToSaveOf {
  readonly kind: Kind;
  readonly institution: string;
  readonly table: TableToSave;
}

/** A chunk of a snapshot's records: as the model stores them (see packed-times.ts), or as made. */
export type SnapshotChunk = { readonly kind: Kind } & ({ readonly stored: readonly Stored<AnyRecord>[] } | { readonly records: readonly AnyRecord[] });

/** By kind, each record by id, as stored (see packed-times.ts). */
type Maps = { [K in Kind]: ShardedMap<Stored<Records[K]>> };
type AnyStored = Stored<AnyRecord>;

/** How many rows a table to save has (its indexes' and columns' length). */
function rowsOf(table: TableToSave): number {
  return table.indexes[0]?.length ?? table.columns[0]?.length ?? 0;
}

/** Records `tablesToSave` lists between two pauses, at most (a few ms of lookups). */
const PLACES_A_PIECE = 4_096;

/** A persisted read model, as `loadPersisted` takes it: the tables' saved indexes, the snapshot's chunks, the journal. */
export interface Persisted {
  /** Read once, in order (lazily: a large table's saved indexes take a while to decode). */
  readonly tables: Iterable<SavedTableOf>;
  readonly chunks: Iterable<SnapshotChunk>;
  readonly journal: Iterable<Change>;
  /** Awaited between slices of a load that lets other work run (loadPersistedInSlices). */
  readonly between?: () => Promise<unknown>;
}

export function institutionOf(kind: Kind, record: AnyStored): string {
  return kind === 'institution' ? record.id : (record as Stored<Exclude<AnyRecord, Records['institution']>>).institution_id;
}

export class ReadModel implements JsonView {
  private readonly maps = Object.fromEntries(kinds.map((k) => [k, new ShardedMap()])) as Maps;
  /** Kind → institution → table. */
  private readonly tables = new Map<Kind, Map<string, Table<AnyRecord>>>();
  private readonly dirty = new Set<Table<AnyRecord>>();
  private readonly keysByHash = new Map<string, ApiKeyRecord>();
  private readonly revisions = Object.fromEntries(kinds.map((k) => [k, 0])) as Record<Kind, number>;
  private readonly revisionsByInstitution = new Map<string, Record<Kind, number>>();
  private readonly interner: Interner;
  /**
   * Shift id → its reservations' ids: made in the background or when first asked for, then kept (see reservationsOf).
   * One id is held as it is, not in an array (an array is two objects more: at 1,000,000 shifts, arrays of one id were
   * 610,000 of the heap's 5.7M objects).
   */
  private reservationsByShift: ShardedMap<string | string[]> | undefined;
  /**
   * While the map is being made: the reservations not yet read into it (an iteration sees what is added meanwhile to
   * the shards it has yet to read; `apply` notes every change itself once the map exists).
   */
  private reservationsToNote: Iterator<Stored<Records['reservation']>> | undefined;
  /** Set while a replay keeps records only (deferTables). */
  private tablesDeferred = false;
  /** Whether big tables publish their changes in the background (publishInBackground), and what to tell of changes. */
  private publishing = false;
  private wakePublisher: (() => void) | undefined;

  /** `clock` gives the time in milliseconds (ages are computed against its day). */
  constructor(
    private readonly defs: TableDefs,
    private readonly clock: () => number = Date.now,
    /**
     * Whether the strings of records changes make are copied before they are kept (see own-strings.ts): changes made
     * from events read from the log hold slices of the events' text. A replay's worker, sent copies, says no.
     */
    private readonly copiesStrings = true,
  ) {
    this.interner = new Interner(copiesStrings);
  }

  /** Today, in days since the epoch (UTC). */
  today(): number {
    return Math.floor(this.clock() / 86_400_000);
  }

  get<K extends Kind>(kind: K, id: string): Records[K] | undefined {
    const stored = this.maps[kind].get(id);
    return stored && unpack(kind, stored);
  }

  /** How many records of a kind there are, of every institution. */
  count(kind: Kind): number {
    return this.maps[kind].size;
  }

  /** Every record of a kind, of every institution. */
  records<K extends Kind>(kind: K): Iterable<Records[K]> {
    return unpacked(kind, this.maps[kind].values());
  }

  /**
   * Random, one per model: revisions count from the load, so the same
   * revision in another process (a restart, another replica) can stand for
   * other data; a tag made of both never can.
   */
  readonly epoch = randomBytes(4).readUInt32BE(0);

  /** Moves on every change of any record of an institution, within this model (conditional GETs tag their answers with it and `epoch`). */
  institutionRevision(institutionId: string): number {
    const counts = this.revisionsByInstitution.get(institutionId);
    if (!counts) return 0;
    let sum = 0;
    for (const kind of kinds) sum += counts[kind];
    return sum;
  }

  /** Moves on every change of a record of this kind (of one institution, if given): cached JSON checks it. */
  revision(kind: Kind, institutionId?: string): number {
    if (institutionId === undefined) return this.revisions[kind];
    return this.revisionsByInstitution.get(institutionId)?.[kind] ?? 0;
  }

  /** The searchable records of one kind and institution (undefined: none yet). */
  table<K extends Kind>(kind: K, institutionId: string): Table<Records[K]> | undefined {
    const table = this.tables.get(kind)?.get(institutionId);
    table?.catchUp();
    return table as Table<Records[K]> | undefined;
  }

  /**
   * The ids of a shift's reservations (what a shift's start moving changes).
   * Made from every reservation — a slice at a time in the background once
   * the server serves (`noteReservations`), or at once when asked for
   * before that is done: at a million shifts it takes about a second, which
   * the first moved start of a live import used to stall every request for —
   * then kept up to date by every change.
   */
  reservationsOf(shiftId: string): Iterable<string> {
    if (this.reservationsByShift === undefined || this.reservationsToNote !== undefined) this.noteReservations(Infinity);
    const ids = this.reservationsByShift!.get(shiftId);
    return typeof ids === 'string' ? [ids] : (ids ?? []);
  }

  /** Make the shift → reservations map until `deadline` (performance.now(), ms); whether there is more to do. */
  noteReservations(deadline: number): boolean {
    if (this.reservationsByShift === undefined) {
      this.reservationsByShift = new ShardedMap();
      this.reservationsToNote = this.maps.reservation.values();
    }
    const toNote = this.reservationsToNote;
    if (toNote === undefined) return false;
    for (let n = 1; ; n++) {
      if ((n & 1023) === 0 && performance.now() >= deadline) return true;
      const next = toNote.next();
      if (next.done) break;
      this.noteReservation(next.value.shift_id, next.value.id, true);
    }
    this.reservationsToNote = undefined;
    return false;
  }

  private noteReservation(shiftId: string, id: string, held: boolean): void {
    const byShift = this.reservationsByShift!;
    const ids = byShift.get(shiftId);
    // A shift's few ids in an array (a Set each cost several times the memory), one alone as it is; an id noted twice
    // is kept once.
    if (held) {
      if (ids === undefined) byShift.set(shiftId, id);
      else if (typeof ids === 'string') {
        if (ids !== id) byShift.set(shiftId, [ids, id]);
      } else if (!ids.includes(id)) ids.push(id);
    } else if (ids === id) byShift.delete(shiftId);
    else if (typeof ids === 'object') {
      const at = ids.indexOf(id);
      if (at >= 0) ids.splice(at, 1);
      if (ids.length === 1) byShift.set(shiftId, ids[0]!);
    }
  }

  /** The live, unrevoked API key with this SHA-256 hash. */
  apiKey(sha256: string): ApiKeyRecord | undefined {
    return this.keysByHash.get(sha256);
  }

  apply(change: Change): void {
    const { kind } = change;
    const record = change.record && this.interner.record(change.record);
    // The id is kept (the map's key, the record's own): a copy. A removal only looks it up.
    const id = record && this.copiesStrings ? ownCopy(change.id) : change.id;
    if (record && this.copiesStrings) (record as { id: string }).id = id;
    const stored = record && pack(kind, record);
    const before = (this.maps[kind] as ShardedMap<AnyStored>).swap(id, stored ?? undefined);
    this.revisions[kind] += 1;
    const owner = stored ?? before;
    if (!owner) return;
    const institution = institutionOf(kind, owner);
    this.countsOf(institution)[kind] += 1;

    if (kind === 'apikey') this.indexKey(before as ApiKeyRecord | undefined, record as ApiKeyRecord | null);
    if (kind === 'reservation' && this.reservationsByShift) {
      const was = before as Stored<Records['reservation']> | undefined;
      const now = stored as Stored<Records['reservation']> | null;
      if (was && was.shift_id !== now?.shift_id) this.noteReservation(was.shift_id, id, false);
      if (now) this.noteReservation(now.shift_id, id, true);
    }
    if (this.tablesDeferred) return;

    const table = this.tableOf(kind, institution);
    if (!table) return;
    if (stored !== null && this.listed(kind, stored)) table.set(id, stored, record!);
    else table.set(id, null);
    this.dirty.add(table);
    this.wakePublisher?.();
  }

  /**
   * Load a persisted model into this empty one: seed each saved table's
   * symbol codes, take the snapshot's records a chunk at a time, take the
   * saved indexes of each table they fit (instead of sorting its rows),
   * then apply the journal's changes over them. The number of tables whose
   * indexes were taken as saved.
   */
  loadPersisted(persisted: Persisted): number {
    return runThrough(this.loadSteps(persisted));
  }

  /**
   * `loadPersisted`, letting other work run every `sliceMs` (a server
   * answering /healthz while it loads); `onProgress` is told the records
   * and changes loaded so far.
   */
  async loadPersistedInSlices(persisted: Persisted, onProgress?: (loaded: number) => void, sliceMs = 50): Promise<number> {
    const steps = this.loadSteps(persisted);
    let sliceStart = performance.now();
    for (;;) {
      const step = steps.next();
      if (step.done) return step.value;
      if (performance.now() - sliceStart < sliceMs) continue;
      onProgress?.(step.value);
      await new Promise((resolve) => setImmediate(resolve));
      await persisted.between?.();
      sliceStart = performance.now();
    }
  }

  /** The work of a load, yielding the records and changes loaded so far between chunks (and every 1,000 changes of the journal: 10,000 took 0.4 s). */
  private *loadSteps(persisted: Persisted): Generator<number, number> {
    let loaded = 0;
    // A table at a time, the caller's other work between them (a server's first requests wait for no more).
    const tables: (SavedTableOf | undefined)[] = [];
    for (const { kind, institution, table } of persisted.tables) {
      const made = this.tableOf(kind, institution);
      made?.seedSymbols(table.symbols);
      made?.reserve(table.indexes[0]?.order.length ?? 0);
      made?.seedColumns(table.columns);
      // The columns are copied: kept no longer.
      tables.push({ kind, institution, table: { symbols: table.symbols, indexes: table.indexes } });
      yield loaded;
    }
    for (const chunk of persisted.chunks) {
      loaded += this.loadChunk(chunk);
      yield loaded;
    }
    let restored = 0;
    for (const [i, saved] of tables.entries()) {
      const { kind, institution, table } = saved!;
      const made = this.tables.get(kind)?.get(institution);
      made?.takeColumns();
      if (made?.restoreIndexes(table.indexes)) restored++;
      tables[i] = undefined; // its indexes are copied too
      yield loaded;
    }
    for (const change of persisted.journal) {
      // A change to a table makes its symbol codes whole at once (SymbolCodes.encode): 0.1-0.3 s for a big table's,
      // and a journal's first changes held a loading server's /healthz for up to 1.2 s. They are made first, a piece
      // at a time.
      const table = this.tableOfChange(change);
      if (table) while (table.makeSymbolCodes(performance.now() + 5)) yield loaded;
      this.apply(change);
      if (++loaded % 1_000 === 0) yield loaded;
    }
    // The journal's changes into the indexes a step at a time (a big table's took 0.2-0.3 s in one).
    for (const table of this.dirty) while (table.publishStep(performance.now() + 5)) yield loaded;
    this.flush();
    return restored;
  }

  /** The table a change lands in (of its record, or of the record it deletes), if it has one. */
  private tableOfChange({ kind, id, record }: Change): Table<AnyRecord> | undefined {
    const owner = record ?? this.maps[kind].get(id);
    return owner ? this.tables.get(kind)?.get(institutionOf(kind, owner)) : undefined;
  }

  /**
   * A chunk of a snapshot's records, none of them in the model yet: what
   * `apply` does for each, without looking for the record it replaces
   * (there is none) or sharing its strings (the chunk shares them).
   */
  private loadChunk(chunk: SnapshotChunk): number {
    const { kind } = chunk;
    const map = this.maps[kind] as ShardedMap<AnyStored>;
    const made = 'records' in chunk ? chunk.records : undefined;
    const records = 'stored' in chunk ? chunk.stored : isPacked(kind) ? made!.map((record) => pack(kind, record)) : made!;
    map.setEach(
      records.map((record) => record.id),
      records,
    );
    // The shift → reservations map, if it is made (one being made will read these too: they are added to the map it reads).
    if (kind === 'reservation' && this.reservationsByShift !== undefined && this.reservationsToNote === undefined) {
      for (const record of records as readonly Stored<Records['reservation']>[]) this.noteReservation(record.shift_id, record.id, true);
    }
    this.revisions[kind] += records.length;
    let institution: string | undefined;
    let counts: Record<Kind, number> | undefined;
    for (const record of records) {
      const owner = institutionOf(kind, record);
      if (owner !== institution) counts = this.countsOf((institution = owner));
      counts![kind] += 1;
      if (kind === 'apikey') this.indexKey(undefined, record as ApiKeyRecord);
    }
    this.fillTables(kind, records, made);
    return records.length;
  }

  /**
   * Set these records (new to the tables) in the tables of their institutions, if listed: as stored, and as made when
   * at hand (`made`, in the same order).
   */
  private fillTables(kind: Kind, records: readonly AnyStored[], made?: readonly AnyRecord[]): void {
    if (!this.defs[kind]) return;
    // Each institution's run of records at once (a chunk holds long runs of one): Table.addAll.
    let institution: string | undefined;
    let run: AnyStored[] = [];
    let runMade: Array<AnyRecord | undefined> = [];
    const addRun = () => {
      if (run.length === 0) return;
      const table = this.tableOf(kind, institution!)!;
      this.dirty.add(table);
      table.addAll(run, made && runMade);
      run = [];
      runMade = [];
    };
    for (let i = 0; i < records.length; i++) {
      const record = records[i]!;
      if (!this.listed(kind, record)) continue;
      const owner = institutionOf(kind, record);
      if (owner !== institution) {
        addRun();
        institution = owner;
      }
      run.push(record);
      if (made) runMade.push(made[i]);
    }
    addRun();
  }

  /** Make each table of this kind room for the rows these records will take (one allocation, not a doubling per size). */
  private reserveTables(kind: Kind, records: readonly AnyStored[]): void {
    if (!this.defs[kind]) return;
    const rows = new Map<string, number>();
    for (const record of records) {
      if (!this.listed(kind, record)) continue;
      const owner = institutionOf(kind, record);
      rows.set(owner, (rows.get(owner) ?? 0) + 1);
    }
    for (const [institution, count] of rows) this.tableOf(kind, institution)!.reserve(count);
  }

  /** Whether a record appears in its kind's lists and searches. */
  private listed(kind: Kind, record: AnyStored): boolean {
    return (this.defs[kind] as TableDef<AnyRecord> | undefined)?.include?.(record) ?? true;
  }

  /**
   * For a replay that nothing reads meanwhile: from now on keep only the
   * records (what projections read), not the tables, which `buildTables`
   * then makes once from the final records instead of from every version
   * of every record on the way.
   */
  deferTables(): void {
    this.tablesDeferred = true;
  }

  /** Make every table anew from the records, and keep them up to date again. */
  buildTables(): void {
    this.tablesDeferred = false;
    this.tables.clear();
    this.dirty.clear();
    for (const kind of kinds) this.makeTables(kind);
    this.flush();
  }

  /** Make a kind's tables from its records (not yet indexed: see flush). */
  private makeTables(kind: Kind): void {
    const records = Array.from(this.maps[kind].values() as Iterable<AnyStored>);
    this.reserveTables(kind, records);
    this.fillTables(kind, records);
  }

  /** Grow the tables that are nearly full ahead of need (Table.growAhead), until `deadline`. Whether there is more to do now. */
  growAhead(deadline: number): boolean {
    let more = false;
    for (const byInstitution of this.tables.values()) {
      for (const table of byInstitution.values()) {
        if (performance.now() >= deadline) return true;
        more = table.growAhead(deadline) || more;
      }
    }
    return more;
  }

  /** Allocate the memory big tables' indexes make their next orders in (Table.makeSpares), until `deadline`. Whether there is more to do now. */
  makeSpares(deadline: number): boolean {
    for (const byInstitution of this.tables.values()) {
      for (const table of byInstitution.values()) {
        if (performance.now() >= deadline) return true;
        if (table.makeSpares()) return true;
      }
    }
    return false;
  }

  /**
   * Make the symbol codes the snapshot a start-up loaded seeded
   * (SymbolCodes), until `deadline` (performance.now(), ms). Whether there
   * is more to do now.
   */
  makeSymbolCodes(deadline: number): boolean {
    for (const byInstitution of this.tables.values()) {
      for (const table of byInstitution.values()) if (table.makeSymbolCodes(deadline)) return true;
    }
    return false;
  }

  /** Make the zone maps searches wanted (SortedIndex.makeZoneMaps), until `deadline` (performance.now(), ms). Whether there is more to do now. */
  makeZoneMaps(deadline: number): boolean {
    for (const byInstitution of this.tables.values()) {
      for (const table of byInstitution.values()) if (table.makeZoneMaps(deadline)) return true;
    }
    return false;
  }

  /**
   * Make the rank matrices searches wanted (OrderRanks), until `deadline`
   * (performance.now(), ms). Whether there is more to do now.
   */
  buildRanks(deadline: number): boolean {
    let more = false;
    for (const byInstitution of this.tables.values()) {
      for (const table of byInstitution.values()) {
        if (performance.now() >= deadline) return true;
        if (table.ranks.work(deadline)) more = true;
      }
    }
    return more;
  }

  /** Bytes the rank matrices made so far hold, every table's together. */
  rankBytes(): number {
    let bytes = 0;
    for (const byInstitution of this.tables.values()) for (const table of byInstitution.values()) bytes += table.ranks.bytes;
    return bytes;
  }

  /** Bring every index up to date (after a batch of changes). */
  flush(): void {
    for (const table of this.dirty) table.flush();
    this.dirty.clear();
  }

  /** `flush`, but for the tables that publish their changes in the background (see publishInBackground). */
  catchUp(): void {
    for (const table of this.dirty) {
      table.catchUp();
      if (!table.unpublished) this.dirty.delete(table);
    }
  }

  /**
   * From now on (`on`), big tables publish their changes in the background, by `publishIndexes` (what the
   * server's background work does first), and searches see each as of its last publication; or (`off`) they are
   * flushed now and whenever read again. See Table.publishInBackground. `wake` is called when a table has new
   * changes (the background may be asleep).
   */
  publishInBackground(on: boolean, wake?: () => void): void {
    this.publishing = on;
    this.wakePublisher = on ? wake : undefined;
    for (const byInstitution of this.tables.values()) for (const table of byInstitution.values()) table.publishInBackground(on);
  }

  /** Whether big tables publish their changes in the background (publishInBackground). */
  get publishesInBackground(): boolean {
    return this.publishing;
  }

  /** When the next table's changes may be published (Table.publicationDue; performance.now(), ms), Infinity when none wait. */
  publicationDue(): number {
    let due = Infinity;
    for (const table of this.dirty) due = Math.min(due, table.publicationDue);
    return due;
  }

  /** Publish the tables' changes (Table.publishStep) until `deadline` (performance.now(), ms). Whether there is more to do now. */
  publishIndexes(deadline: number): boolean {
    for (const table of this.dirty) {
      if (table.publishStep(deadline)) return true;
      if (!table.unpublished) this.dirty.delete(table);
      if (performance.now() >= deadline) return this.dirty.size > 0;
    }
    return false;
  }

  /**
   * Whether searches of an institution's records may now show some as they were before their latest changes (a
   * table of it waits for a publication): what its revision says is not yet what they show.
   */
  stale(institutionId: string): boolean {
    if (!this.publishing) return false;
    // Every table waiting for a publication is among the dirty ones (it leaves them once published): none at all
    // while no change comes in, the common case (this is asked on every GET under /api/).
    for (const table of this.dirty) if (table.institution === institutionId && table.stale) return true;
    return false;
  }

  /** Every record, by kind (a snapshot of the model), as stored (see SnapshotRecords), in the order a snapshot stores them. */
  *byKind(): Iterable<[Kind, Iterable<AnyStored>]> {
    for (const kind of kinds) yield [kind, this.storedInSnapshotOrder(kind)];
  }

  /**
   * A kind's records in the order a snapshot stores them: by the shard of their ids (ShardedMap.valuesByShard).
   * Loading a snapshot then sets each map's shards one after the other, a shard's table in the cache while it fills,
   * not a few hundred keys into every shard a chunk: at 1M shifts, a start-up took 1.6-1.9 s against 2.6-2.8 s from
   * the same records in the order they came. The price is a rebuild's: its workers' maps are whole (ShardedMap.splitting),
   * their records lie in memory in the order they came, and encoding them in this order reads them all over it.
   */
  private storedInSnapshotOrder(kind: Kind): Iterable<AnyStored> {
    return (this.maps[kind] as ShardedMap<AnyStored>).valuesByShard();
  }

  /**
   * Every table's indexes (with rows as places in the order `byKind()`
   * lists the table's records) and symbol codes, made as they are written
   * (`undefined` between pieces of the work: see TableToSaveOf): a model
   * that seeds the codes, then loads those records in that order, has them
   * at those rows and can take the indexes as they are. The model must not
   * change until every one is written. Listed largest first, once every
   * table's places are found (4 bytes a row, every table's at once).
   */
  *tablesToSave(): Iterable<TableToSaveOf | undefined> {
    this.flush();
    const listed: TableToSaveOf[] = [];
    for (const [kind, byInstitution] of this.tables) {
      for (const toSave of this.tablesToSaveOf(kind, byInstitution)) {
        if (toSave === undefined) yield undefined;
        else listed.push(toSave);
      }
    }
    // The largest first, so that the memory a writer packs it in holds each table after it (a snapshot's tables are
    // stored by kind and institution, whatever order they come in).
    yield* listed.sort((a, b) => rowsOf(b.table) - rowsOf(a.table));
  }

  /** `tablesToSave`, made at once. */
  *savedTables(): Iterable<SavedTableOf> {
    for (const saving of this.tablesToSave()) if (saving) yield { kind: saving.kind, institution: saving.institution, table: savedTableOf(saving.table) };
  }

  /**
   * `tablesToSave` of a model whose tables a replay deferred and that is let go of once saved (a replay worker's):
   * each kind's tables are made from the records only when their turn comes, and let go of once the next kind's
   * turn comes (each table's arrays are made as it is written, after it is listed), so that the records never sit
   * beside every table at once. `letGo` is told whenever much may have just become garbage (with how many rows the
   * kind's tables hold): once a kind's tables are made (what sorting them took) and once they are let go of.
   */
  *tablesToSaveOnce(letGo: (rows: number) => void = () => undefined): Iterable<TableToSaveOf | undefined> {
    for (const kind of kinds) {
      this.makeTables(kind);
      this.flush();
      const byInstitution = this.tables.get(kind);
      let rows = 0;
      for (const table of byInstitution?.values() ?? []) rows += table.rowCount;
      letGo(rows);
      if (byInstitution) yield* this.tablesToSaveOf(kind, byInstitution);
      // (A pause, so that a writer has let go of the kind's last table before it is let go of here.)
      yield undefined;
      this.tables.delete(kind);
      letGo(rows);
    }
  }

  /**
   * The tables of a kind to save, with their rows placed in the order a snapshot stores the kind's records
   * (storedInSnapshotOrder). Each record's table and row are found first in the map's own order, the order its
   * tables' rows were made in (by a bulk load, or makeTables): a row is then the one after the last found in its table,
   * with no look-up (unless changed since). The places then follow from the snapshot's order alone, without reading
   * the records again: in a whole map's snapshot order they lie all over memory (a rebuild of 1.98M events: each of its
   * two workers took about 0.3 s more when it read them in that order).
   */
  private *tablesToSaveOf(kind: Kind, byInstitution: ReadonlyMap<string, Table<AnyRecord>>): Iterable<TableToSaveOf | undefined> {
    const map = this.maps[kind] as ShardedMap<AnyStored>;
    const tables = Array.from(byInstitution.values());
    const tableOfInstitution = new Map(Array.from(byInstitution.keys(), (institution, t) => [institution, t]));
    // Each record's table plus one (0: none) and row, by its index in the map's order. (Not filled ahead: new memory
    // costs most when first written, and a fill of a million entries at once held a journal fold's requests.)
    const tableOfEntry = new Int32Array(map.size);
    const rowOfEntry = new Uint32Array(map.size);
    const expected = new Uint32Array(tables.length);
    let i = 0;
    for (const record of map.values()) {
      if (i % PLACES_A_PIECE === 0 && i > 0) yield undefined;
      const t = tableOfInstitution.get(institutionOf(kind, record));
      const at = i++;
      if (t === undefined) continue;
      const table = tables[t]!;
      const guess = expected[t]!;
      const row = table.rowCount > guess && table.stored(guess) === record ? guess : table.rowOf(record.id);
      if (row === undefined) continue;
      expected[t] = row + 1;
      tableOfEntry[at] = t + 1;
      rowOfEntry[at] = row;
    }
    const placeOf = tables.map((table) => uint32s(table.rowCount));
    const next = new Uint32Array(tables.length);
    const order = map.shardOrder();
    for (let k = 0; k < map.size; k++) {
      if (k % PLACES_A_PIECE === 0 && k > 0) yield undefined;
      const entry = order === undefined ? k : order[k]!;
      const t = tableOfEntry[entry]! - 1;
      if (t >= 0) placeOf[t]![rowOfEntry[entry]!] = next[t]!++;
    }
    for (const [institution, t] of tableOfInstitution) yield { kind, institution, table: tables[t]!.toSave(placeOf[t]!) };
  }

  /** The change counters of an institution's kinds. */
  private countsOf(institution: string): Record<Kind, number> {
    let counts = this.revisionsByInstitution.get(institution);
    if (!counts) {
      counts = Object.fromEntries(kinds.map((k) => [k, 0])) as Record<Kind, number>;
      this.revisionsByInstitution.set(institution, counts);
    }
    return counts;
  }

  /** The table of a kind and institution, made on first use (undefined: the kind has none). */
  private tableOf(kind: Kind, institution: string): Table<AnyRecord> | undefined {
    const def = this.defs[kind] as TableDef<AnyRecord> | undefined;
    if (!def) return undefined;
    let byInstitution = this.tables.get(kind);
    if (!byInstitution) {
      byInstitution = new Map();
      this.tables.set(kind, byInstitution);
    }
    let table = byInstitution.get(institution);
    if (!table) {
      table = new Table<AnyRecord>(def, institution, unpackerOf(kind) as ((stored: AnyStored) => AnyRecord) | undefined);
      if (this.publishing) table.publishInBackground(true);
      byInstitution.set(institution, table);
    }
    return table;
  }

  private indexKey(before: ApiKeyRecord | undefined, after: ApiKeyRecord | null): void {
    if (before) this.keysByHash.delete(before.key_sha256);
    if (after && !after.revoked) this.keysByHash.set(after.key_sha256, after);
  }
}
