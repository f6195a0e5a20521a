/**
 * The event ids an import has met: those already in the log, and those its
 * file gives or derives, line by line. A line without an id gets one derived
 * from its text and how often the same text came before in the file, so a
 * re-import of the file (or of its remainder after an interruption) appends
 * nothing twice.
 */
import { createHash } from 'node:crypto';
import { type SavedUuidTable, UuidTable } from './uuid-table.js';

const IN_LOG = 1;
const IN_FILE = 2;

/** The id of the `occurrence`-th line (0 for the first) with this text. */
function derivedId(text: string, occurrence: number): string {
  const h = createHash('sha256').update(`${occurrence}\n${text}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export class EventIds {
  constructor(private readonly met = new UuidTable()) {}

  /** The ids of a summary of the log (log-summary.ts): each one in the log. */
  static restored(saved: SavedUuidTable): EventIds {
    return new EventIds(UuidTable.restored(saved));
  }

  /**
   * Every id met taken as in the log (an import's own, once appended: its derived ids are then the log's), and the
   * table as saved, for a summary of the log.
   */
  allInLog(): SavedUuidTable {
    this.met.setAll(IN_LOG);
    return this.met.saved();
  }

  /** Room for `more` ids than are met now (see UuidTable.reserve). */
  reserve(more: number): void {
    this.met.reserve(this.met.size + more);
  }

  /** An event the log holds: whether its id was met before (an event a summary of the log already took in). */
  inLog(id: string): boolean {
    return this.met.or(id, IN_LOG) !== 0;
  }

  /**
   * A line's event, in file order: whether the log or an earlier line of the file already had its id. Every line
   * with an id, given or derived, comes here before the next line's id is derived.
   */
  metBefore(id: string): boolean {
    return this.met.or(id, IN_FILE) !== 0;
  }

  /**
   * The id of a line without one. Its text's earlier lines took the ids of occurrences 0, 1, … in turn, so the
   * first occurrence whose id no earlier line took counts them: no table of texts is kept.
   */
  derive(text: string): string {
    for (let occurrence = 0; ; occurrence++) {
      const id = derivedId(text, occurrence);
      if (((this.met.get(id) ?? 0) & IN_FILE) === 0) return id;
    }
  }
}
