/**
 * The fold: each event through the projections that handle its type, their
 * changes applied to the model. Pure (no I/O): the projector feeds it from
 * the log, a replay worker feeds it the events of its institutions.
 *
 * A projection sees the model through its event's institution: a record
 * of another institution is not there for it, so an event cannot update
 * or remove what another institution holds, whatever the log says. So
 * every institution folds on its own, which lets a replay fold
 * institutions in parallel. (Ids are global: a log that creates one id in
 * two institutions, which the importer refuses, folds differently on one
 * thread and on several.)
 *
 * Some events the log may hold are refused (folded as nothing, and
 * reported): an ApiKeyIssued repeating a key id or hash ever issued, so a
 * key never changes hands (KeyLedger, fed every event read, whichever
 * institution folds it), and an InstitutionRegistered of an institution
 * that exists (InstitutionUpdated changes one). The importer refuses them
 * before they are appended; another writer of an EventStoreDB log may not.
 */
import { projections as allProjections } from '../../projections/index.js';
import type { Change, Handler, Projection, ReadView } from '../../projections/projection.js';
import type { Kind, Records } from '../../projections/records.js';
import { type EventOf, type EventType, isCatalogEvent } from '../events/catalog.js';
import { subjectIdOf } from '../events/subjects.js';
import { KeyLedger } from '../events/key-ledger.js';
import { comparePositions, type Position, type RecordedEvent } from '../eventstore/port.js';
import { parseEventTimestamp } from '../time.js';
import type { FeedEntry } from './change-feed.js';
import { institutionOf, type ReadModel } from './model.js';

type AnyHandler = Handler<EventType>;
type EventData = { institution_id: string; occurred_at: string } & Parameters<AnyHandler>[1];

function handlersByType(projections: readonly Projection[]): Map<string, AnyHandler[]> {
  const byType = new Map<string, AnyHandler[]>();
  for (const projection of projections) {
    for (const [type, handler] of Object.entries(projection)) {
      if (type === 'name' || typeof handler !== 'function') continue;
      const list = byType.get(type) ?? [];
      list.push(handler as AnyHandler);
      byType.set(type, list);
    }
  }
  return byType;
}

/** The model as one institution's events see it (one object, re-pointed per event). */
class InstitutionView implements ReadView {
  institution = '';
  constructor(private readonly model: ReadModel) {}

  get<K extends Kind>(kind: K, id: string): Records[K] | undefined {
    const record = this.model.get(kind, id);
    return record !== undefined && institutionOf(kind, record) === this.institution ? record : undefined;
  }

  reservationsOf(shiftId: string): Iterable<string> {
    return this.model.reservationsOf(shiftId);
  }
}

/**
 * The institution an event belongs to: every event of the catalog names
 * one ('' for one that does not, as a foreign writer of the log could
 * append: it then sees no records, on one thread or several alike).
 */
export function institutionOfEvent(event: Pick<RecordedEvent, 'data'>): string {
  const id = (event.data as Partial<EventData> | null)?.institution_id;
  return typeof id === 'string' ? id : '';
}

/**
 * Whether a fold of some institutions (`FoldOptions.takes`) must still see this event of another: an issued key,
 * which the key ledger judges across institutions (see `refusal`).
 */
export function judgedAcrossInstitutions(event: Pick<RecordedEvent, 'type'>): boolean {
  return event.type === 'ApiKeyIssued';
}

export interface Folded {
  /** The position of the batch's last event. */
  last: Position;
  /** Events applied (past the position folded from, and taken). */
  applied: number;
}

/** Told of each event the fold refuses, and why. */
export type OnRefused<E extends FoldedEvent = RecordedEvent> = (event: E, problem: string) => void;

/** What a fold reads of an event: its id, stream and revision are the log's, not the read model's. */
export type FoldedEvent = Pick<RecordedEvent, 'type' | 'position' | 'data' | 'invalid'>;

/**
 * The part of an event a fold reads, as an object of its own: what a rebuild sends its workers (200,000 events of a
 * 1.77M-event log through v8.serialize, the structured clone postMessage makes: 74.5 MB, serialized in 168-184 ms
 * and read back in 329-369 ms, against 95.2 MB, 215-255 ms and 450-527 ms whole).
 */
export function foldedPart(event: RecordedEvent): FoldedEvent {
  return event.invalid === undefined ? { type: event.type, position: event.position, data: event.data } : { type: event.type, position: event.position, data: event.data, invalid: event.invalid };
}

export interface FoldOptions {
  /** Where to note the records changed (by kind and id: the last change of each). */
  changed?: Map<string, Change>;
  /** Fold only the events of the institutions this accepts. */
  takes?: (institution: string) => boolean;
  /** Told of each event that changed a record a client reads: the change feed's entries, in log order. */
  feed?: (entry: FeedEntry) => void;
}

export class EventFolder<E extends FoldedEvent = RecordedEvent> {
  private readonly handlers: Map<string, AnyHandler[]>;
  private readonly view: InstitutionView;
  /** Every key issued by the events folded so far (made from the model's keys when first needed: after a load). */
  private keys: KeyLedger | undefined;

  constructor(
    private readonly model: ReadModel,
    projections: readonly Projection[] = allProjections,
    private readonly onRefused?: OnRefused<E>,
  ) {
    this.handlers = handlersByType(projections);
    this.view = new InstitutionView(model);
  }

  /**
   * Apply the events after position `after` (an event delivered twice is
   * skipped), see FoldOptions. Undefined if the batch does not move past
   * `after`.
   */
  fold(events: readonly E[], after: Position, { changed, takes, feed }: FoldOptions = {}): Folded | undefined {
    if (events.length === 0) return undefined;
    let applied = 0;
    for (const event of events) {
      if (comparePositions(event.position, after) <= 0) continue; // delivered twice
      const institution = institutionOfEvent(event);
      // Before the institution filter: every institution's keys count.
      const refused = this.refusal(event);
      if (takes && !takes(institution)) continue;
      applied++;
      if (refused !== undefined) {
        this.onRefused?.(event, refused);
        continue;
      }
      // An event its store found invalid, or of a type no projection handles, changes nothing.
      if (!isCatalogEvent(event)) continue;
      const handlers = this.handlers.get(event.type);
      if (!handlers) continue;
      // Checked against the catalog before it was appended (embedded log) or as it was read (EventStoreDB).
      const data = event.data as EventData;
      const at = parseEventTimestamp(data.occurred_at) ?? 0;
      const changes = this.project(handlers, data, institution, at, event.position);
      for (const change of changes) {
        this.model.apply(change);
        changed?.set(`${change.kind}:${change.id}`, change);
      }
      const id = feed && changes.length > 0 ? subjectIdOf(event.type, data) : undefined;
      if (id !== undefined) {
        const { commit, prepare } = event.position;
        feed!({ institution, commit: Number(commit), prepare: Number(prepare), type: event.type, id, occurredAt: at });
      }
    }
    const last = events[events.length - 1]!.position;
    if (comparePositions(last, after) <= 0) return undefined;
    return { last, applied };
  }

  /**
   * Why the log's rules refuse this event, if they do (the key is then
   * recorded as issued when they do not). An institution's registration is
   * only judged where the institution is folded (its record is there).
   */
  private refusal(event: E): string | undefined {
    if (!isCatalogEvent(event)) return undefined;
    if (judgedAcrossInstitutions(event)) {
      const refusal = this.ledger().issue(event.data as EventOf<'ApiKeyIssued'>['data']);
      return refusal && `${refusal.field}: ${refusal.message}`;
    }
    if (event.type === 'InstitutionRegistered') {
      const { institution_id: id } = event.data as EventOf<'InstitutionRegistered'>['data'];
      if (this.model.get('institution', id)) return `institution_id: institution ${id} is already registered (InstitutionUpdated changes it)`;
    }
    return undefined;
  }

  private ledger(): KeyLedger {
    if (this.keys === undefined) {
      this.keys = new KeyLedger();
      for (const key of this.model.records('apikey')) this.keys.record({ key_id: key.id, key_sha256: key.key_sha256 });
    }
    return this.keys;
  }

  /** Every projection sees the model, as it stood before the event, through the event's institution. */
  private project(handlers: readonly AnyHandler[], data: EventData, institution: string, at: number, position: Position): Change[] {
    const view = this.view;
    view.institution = institution;
    if (handlers.length === 1) return handlers[0]!(view, data, at, position);
    return handlers.flatMap((handler) => handler(view, data, at, position));
  }
}
