/**
 * The read model on disk: every record under [kind, id] and the checkpoint
 * (the log position the records reflect), written in one LMDB transaction
 * per batch so that records and checkpoint never disagree.
 */
import { open, type Database, type RootDatabase } from 'lmdb';
import type { Change } from '../../projections/projection.js';
import type { AnyRecord, Kind } from '../../projections/records.js';
import { type Position, startOfLog } from '../eventstore/port.js';

/** Bump when projections change what they store: an older read model is then rebuilt from the log. */
export const READ_MODEL_VERSION = 3;

interface Meta {
  checkpoint?: { commit: string; prepare: string };
  version?: number;
}

export class ReadModelStore {
  private root!: RootDatabase;
  private records!: Database<AnyRecord, [Kind, string]>;
  private meta!: Database<Meta[keyof Meta], keyof Meta>;

  private constructor(private readonly path: string) {
    this.openEnv();
  }

  static open(path: string): ReadModelStore {
    return new ReadModelStore(path);
  }

  private openEnv(): void {
    this.root = open({ path: this.path, compression: false });
    this.records = this.root.openDB<AnyRecord, [Kind, string]>({
      name: 'records',
      sharedStructuresKey: Symbol.for('structures'),
    });
    this.meta = this.root.openDB<Meta[keyof Meta], keyof Meta>({ name: 'meta' });
  }

  /**
   * Close and open the environment again: after a full load, its pages
   * stay mapped into this process (and count in its resident memory) until
   * the map is let go of. Writes go on as before.
   */
  async reopen(): Promise<void> {
    await this.root.close();
    this.openEnv();
  }

  /** Whether the stored records were made by the current projections. */
  isCurrent(): boolean {
    return this.meta.get('version') === READ_MODEL_VERSION;
  }

  checkpoint(): Position {
    const stored = this.meta.get('checkpoint') as Meta['checkpoint'];
    return stored ? { commit: BigInt(stored.commit), prepare: BigInt(stored.prepare) } : startOfLog;
  }

  *load(): Iterable<[Kind, AnyRecord]> {
    for (const { key, value } of this.records.getRange({ snapshot: false })) yield [key[0], value];
  }

  /** Write a batch of changes and the checkpoint atomically. */
  async write(changes: Iterable<Change>, checkpoint: Position): Promise<void> {
    await this.root.transaction(() => this.put(changes, checkpoint));
  }

  /** `write`, blocking until committed: for bulk writes with nothing else to do meanwhile (far fewer steps per record). */
  writeSync(changes: Iterable<Change>, checkpoint: Position): void {
    this.root.transactionSync(() => this.put(changes, checkpoint));
  }

  private put(changes: Iterable<Change>, checkpoint: Position): void {
    for (const { kind, id, record } of changes) {
      if (record === null) this.records.remove([kind, id]);
      else this.records.put([kind, id], record);
    }
    this.meta.put('checkpoint', { commit: checkpoint.commit.toString(), prepare: checkpoint.prepare.toString() });
    this.meta.put('version', READ_MODEL_VERSION);
  }

  /** Drop every record and the checkpoint (before a replay of the whole log). */
  async clear(): Promise<void> {
    await this.root.transaction(() => {
      this.records.clearSync();
      this.meta.clearSync();
    });
  }

  async close(): Promise<void> {
    await this.root.close();
  }
}
