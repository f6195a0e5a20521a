/**
 * The records of one kind for one institution, with their sorted indexes.
 * Changes land in the record map at once (projections read it); the indexes
 * catch up at `flush`, when they are next read (or once the projector has
 * caught up), all pending changes at once.
 */
import { type IndexDef, type Identified, SortedIndex } from './sorted-index.js';

export class Table<R extends Identified> {
  private readonly records = new Map<string, R>();
  private readonly indexes = new Map<string, SortedIndex<R>>();
  /** Records changed since the last flush, with what the indexes hold for them. */
  private readonly pending = new Map<string, R | undefined>();

  constructor(defs: readonly IndexDef<R>[]) {
    for (const def of defs) this.indexes.set(def.name, new SortedIndex(def));
  }

  get size(): number {
    return this.records.size;
  }

  get(id: string): R | undefined {
    return this.records.get(id);
  }

  /** Insert, replace (same id) or, with `null`, delete a record. */
  set(id: string, record: R | null): void {
    if (!this.pending.has(id)) this.pending.set(id, this.records.get(id));
    if (record === null) this.records.delete(id);
    else this.records.set(id, record);
  }

  /** An index, up to date. */
  index(name: string): SortedIndex<R> {
    this.flush();
    const index = this.indexes.get(name);
    if (!index) throw new Error(`no index ${name}`);
    return index;
  }

  hasIndex(name: string): boolean {
    return this.indexes.has(name);
  }

  flush(): void {
    if (this.pending.size === 0) return;
    const removed = new Set<R>();
    const added: R[] = [];
    for (const [id, before] of this.pending) {
      if (before !== undefined) removed.add(before);
      const after = this.records.get(id);
      if (after !== undefined) added.push(after);
    }
    for (const index of this.indexes.values()) index.update(removed, [...added]);
    this.pending.clear();
  }
}
