/**
 * Each stream's last revision as an import knows it: read from the log
 * before it checks its file, then moved on by its own appends. While the
 * log's head is where the import last saw it, this is exact, and its
 * appends pass it on instead of having every stream looked up
 * (`AppendManyOptions.asOf`). A stream is named `<kind>-<id>`: one UuidTable
 * a kind, so a million streams take a few tens of megabytes.
 */
import { type SavedUuidTable, UuidTable } from './uuid-table.js';

export class StreamRevisions {
  private readonly byKind = new Map<string, UuidTable>();

  /** The revisions of a summary of the log (log-summary.ts), a table by kind. */
  static restored(saved: Iterable<readonly [string, SavedUuidTable]>): StreamRevisions {
    const revisions = new StreamRevisions();
    for (const [kind, table] of saved) revisions.byKind.set(kind, UuidTable.restored(table));
    return revisions;
  }

  /** Each kind's table as saved. */
  saved(): [string, SavedUuidTable][] {
    return [...this.byKind].map(([kind, table]) => [kind, table.saved()]);
  }

  /** The stream's last revision, -1 when it has no event. */
  of(stream: string): number {
    const [kind, id] = split(stream);
    return this.byKind.get(kind)?.get(id) ?? -1;
  }

  set(stream: string, revision: number): void {
    const [kind, id] = split(stream);
    this.tableOf(kind).set(id, revision);
  }

  /** The stream's last revision (-1 when it has no event), and one event more from now on: `of` then `set`, in one look-up. */
  next(stream: string): number {
    const [kind, id] = split(stream);
    return this.tableOf(kind).increment(id) ?? -1;
  }

  private tableOf(kind: string): UuidTable {
    let table = this.byKind.get(kind);
    if (table === undefined) this.byKind.set(kind, (table = new UuidTable()));
    return table;
  }
}

/** A stream's name as its kind (up to the first '-') and the rest; a name without '-' is all rest. */
function split(stream: string): [string, string] {
  const dash = stream.indexOf('-');
  return dash < 0 ? ['', stream] : [stream.slice(0, dash), stream.slice(dash + 1)];
}
