/**
 * Reference checks for imports: a fold over events that keeps which ids
 * exist, of what kind and in which institution, and reports an event that
 * creates an id twice (an institution registered again included), issues
 * a key already issued, or refers to a record that is missing, gone, or
 * belongs to another institution.
 */
import type { DomainEvent, EventData } from '../events/catalog.js';
import { KeyLedger } from '../events/key-ledger.js';
import { parseEventTimestamp } from '../time.js';
import { type SavedUuidTable, UuidTable } from './uuid-table.js';

const ENTITY_KINDS = [
  'institution',
  'apikey',
  'category',
  'opportunity',
  'shift',
  'profile',
  'customfield',
  'reservation',
  'formsubmission',
  'sequence',
  'step',
  'usersequence',
  'site',
  'webhook',
] as const;
export type EntityKind = (typeof ENTITY_KINDS)[number];
const KIND_CODES = new Map<EntityKind, number>(ENTITY_KINDS.map((kind, code) => [kind, code]));

interface Entity {
  kind: EntityKind;
  institution: string;
  /** A removed shift, a cancelled reservation or a removed step: it can no longer be referred to. */
  gone: boolean;
}

/** A kind's code in the low 4 bits of an entity's number, then whether it is gone, then its institution's number. */
const KIND_BITS = 0b1111;
const GONE = 0b10000;
const INSTITUTION_SHIFT = 5;

/** Every entity by id, each one number in a UuidTable (an import meets millions of them). */
class Entities {
  private readonly institutionCodes: Map<string, number>;

  constructor(
    private readonly table = new UuidTable(),
    private readonly institutions: string[] = [],
  ) {
    this.institutionCodes = new Map(institutions.map((id, code) => [id, code]));
  }

  get(id: string): Entity | undefined {
    const n = this.table.get(id);
    if (n === undefined) return undefined;
    return { kind: ENTITY_KINDS[n & KIND_BITS]!, gone: (n & GONE) !== 0, institution: this.institutions[n >>> INSTITUTION_SHIFT]! };
  }

  add(id: string, kind: EntityKind, institution: string): void {
    let code = this.institutionCodes.get(institution);
    if (code === undefined) {
      code = this.institutions.push(institution) - 1;
      this.institutionCodes.set(institution, code);
    }
    this.table.set(id, code * 2 ** INSTITUTION_SHIFT + KIND_CODES.get(kind)!);
  }

  end(id: string): void {
    const n = this.table.get(id);
    if (n !== undefined && (n & GONE) === 0) this.table.set(id, n + GONE);
  }

  saved(): SavedDirectory {
    return { entities: this.table.saved(), institutions: [...this.institutions] };
  }
}

export interface Ref {
  field: string;
  kind: EntityKind;
  id: string;
}

export interface Effects {
  creates?: Ref;
  refs: Ref[];
  ends?: Ref;
}

export interface ReferenceProblem {
  field: string;
  message: string;
}

const ref = (field: string, kind: EntityKind, id: string): Ref => ({ field, kind, id });

function effectsOf(event: DomainEvent): Effects {
  const { type, data: d } = event;
  switch (type) {
    case 'InstitutionRegistered':
      return { creates: ref('institution_id', 'institution', d.institution_id), refs: [] };
    case 'InstitutionUpdated':
      return { refs: [] }; // its institution_id must be a registered institution, as for every event
    case 'ApiKeyIssued':
      return { creates: ref('key_id', 'apikey', d.key_id), refs: [] };
    case 'ApiKeyRevoked':
      return { refs: [ref('key_id', 'apikey', d.key_id)] };
    case 'CategoryCreated':
      return { creates: ref('category_id', 'category', d.category_id), refs: [] };
    case 'CategoryUpdated':
      return { refs: [ref('category_id', 'category', d.category_id)] };
    case 'OpportunityCreated':
      return {
        creates: ref('opportunity_id', 'opportunity', d.opportunity_id),
        refs: [ref('category_id', 'category', d.category_id)],
      };
    case 'OpportunityUpdated':
      return {
        refs: [
          ref('opportunity_id', 'opportunity', d.opportunity_id),
          ...(d.category_id ? [ref('category_id', 'category', d.category_id)] : []),
        ],
      };
    case 'OpportunityStatusChanged':
      return { refs: [ref('opportunity_id', 'opportunity', d.opportunity_id)] };
    case 'ShiftCreated':
      return {
        creates: ref('shift_id', 'shift', d.shift_id),
        refs: [ref('opportunity_id', 'opportunity', d.opportunity_id)],
      };
    case 'ShiftUpdated':
      return { refs: [ref('shift_id', 'shift', d.shift_id)] };
    case 'ShiftRemoved':
      return { refs: [], ends: ref('shift_id', 'shift', d.shift_id) };
    case 'ProfileCreated':
      return { creates: ref('profile_id', 'profile', d.profile_id), refs: [] };
    case 'ProfileUpdated':
    case 'ProfileTagged':
    case 'ProfileUntagged':
      return { refs: [ref('profile_id', 'profile', d.profile_id)] };
    case 'ProfileCustomFieldAnswered':
      return {
        refs: [ref('profile_id', 'profile', d.profile_id), ref('custom_field_id', 'customfield', d.custom_field_id)],
      };
    case 'ProfileOpportunityAdded':
      return {
        refs: [ref('profile_id', 'profile', d.profile_id), ref('opportunity_id', 'opportunity', d.opportunity_id)],
      };
    case 'CustomFieldDefined':
      return { creates: ref('custom_field_id', 'customfield', d.custom_field_id), refs: [] };
    case 'CustomFieldUpdated':
      return { refs: [ref('custom_field_id', 'customfield', d.custom_field_id)] };
    case 'ReservationCreated':
      return {
        creates: ref('reservation_id', 'reservation', d.reservation_id),
        refs: [ref('shift_id', 'shift', d.shift_id), ref('user_id', 'profile', d.user_id)],
      };
    case 'HoursLogged':
      return { refs: [ref('reservation_id', 'reservation', d.reservation_id)] };
    case 'ReservationCancelled':
      return { refs: [], ends: ref('reservation_id', 'reservation', d.reservation_id) };
    case 'FormSubmitted':
      return {
        creates: ref('submission_id', 'formsubmission', d.submission_id),
        refs: [
          ref('user_id', 'profile', d.user_id),
          ...(d.site_ids ?? []).map((id, i) => ref(`site_ids.${i}`, 'site', id)),
          ...(d.category_ids ?? []).map((id, i) => ref(`category_ids.${i}`, 'category', id)),
          ...(d.arrival_source_opportunity_id
            ? [ref('arrival_source_opportunity_id', 'opportunity', d.arrival_source_opportunity_id)]
            : []),
          ...(d.opportunities ?? []).map((o, i) => ref(`opportunities.${i}.opportunity_id`, 'opportunity', o.opportunity_id)),
        ],
      };
    case 'FormSubmissionStatusChanged':
      return { refs: [ref('submission_id', 'formsubmission', d.submission_id)] };
    case 'SequenceCreated':
      return { creates: ref('sequence_id', 'sequence', d.sequence_id), refs: [] };
    case 'SequenceUpdated':
      return { refs: [ref('sequence_id', 'sequence', d.sequence_id)] };
    case 'SequenceStepAdded':
      return { creates: ref('step_id', 'step', d.step_id), refs: [ref('sequence_id', 'sequence', d.sequence_id)] };
    case 'SequenceStepRemoved':
      return { refs: [ref('sequence_id', 'sequence', d.sequence_id)], ends: ref('step_id', 'step', d.step_id) };
    case 'UserSequenceStarted':
      return {
        creates: ref('user_sequence_id', 'usersequence', d.user_sequence_id),
        refs: [ref('sequence_id', 'sequence', d.sequence_id), ref('user_id', 'profile', d.user_id)],
      };
    case 'UserSequenceStatusChanged':
    case 'UserSequenceStepUpdated':
      return { refs: [ref('user_sequence_id', 'usersequence', d.user_sequence_id)] };
    case 'SiteCreated':
      return { creates: ref('site_id', 'site', d.site_id), refs: [] };
    case 'UserAssignedToSite':
    case 'UserUnassignedFromSite':
      return { refs: [ref('site_id', 'site', d.site_id), ref('user_id', 'profile', d.user_id)] };
    case 'SiteRequestHandled':
      return { refs: [] };
    case 'WebhookSubscribed':
      return { creates: ref('webhook_id', 'webhook', d.webhook_id), refs: [] };
    case 'WebhookUnsubscribed':
      return { refs: [], ends: ref('webhook_id', 'webhook', d.webhook_id) };
    case 'WebhookPaused':
    case 'WebhookResumed':
    case 'WebhookAttempted':
      return { refs: [ref('webhook_id', 'webhook', d.webhook_id)] };
    default: {
      const unreachable: never = event;
      return unreachable;
    }
  }
}

/** Checks on values within one event that a schema cannot express. */
function valueProblems(event: DomainEvent): ReferenceProblem[] {
  if (event.type === 'ShiftCreated') {
    const start = parseEventTimestamp(event.data.shift_start_at) ?? 0;
    const end = parseEventTimestamp(event.data.shift_end_at) ?? 0;
    if (end < start) return [{ field: 'shift_end_at', message: 'must not be before shift_start_at' }];
  }
  return [];
}

/**
 * What checking an event against the directory reads of it: made where the line is parsed (an import's worker
 * threads), so that the check needs no more than these few strings.
 */
export interface EventFacts {
  readonly type: DomainEvent['type'];
  readonly institution: string;
  readonly effects: Effects;
  /** What is wrong within the event itself (valueProblems). */
  readonly problems: readonly ReferenceProblem[];
  /** An issued key's data (the key ledger checks it). */
  readonly key?: Extract<DomainEvent, { type: 'ApiKeyIssued' }>['data'];
}

export function factsOf(event: DomainEvent): EventFacts {
  const facts = { type: event.type, institution: event.data.institution_id, effects: effectsOf(event), problems: valueProblems(event) };
  return event.type === 'ApiKeyIssued' ? { ...facts, key: event.data } : facts;
}

/** A ReferenceDirectory's entities as a summary of the log keeps them (log-summary.ts). */
export interface SavedDirectory {
  readonly entities: SavedUuidTable;
  /** The institutions' ids, by their number in the entities' values. */
  readonly institutions: readonly string[];
}

export class ReferenceDirectory {
  private readonly entities: Entities;
  private readonly keys = new KeyLedger();
  /** The institution the last event that passed belonged to (registered: an institution is never removed). */
  private lastInstitution: string | undefined;

  /** A directory with the entities of `saved`, and the keys `issued` (in the order they were). */
  constructor(saved?: SavedDirectory, issued: Iterable<Pick<EventData<'ApiKeyIssued'>, 'key_id' | 'key_sha256'>> = []) {
    this.entities = saved ? new Entities(UuidTable.restored(saved.entities), [...saved.institutions]) : new Entities();
    for (const key of issued) this.keys.record(key);
  }

  saved(): SavedDirectory {
    return this.entities.saved();
  }

  /**
   * Fold an event that is already in the log. Only what the read model's
   * fold refuses is checked (a key issued again, an institution registered
   * again: another writer of an EventStoreDB log may append them): such an
   * event is folded as nothing here too.
   */
  record(event: DomainEvent): void {
    if (event.type === 'ApiKeyIssued' && this.keys.issue(event.data) !== undefined) return;
    if (event.type === 'InstitutionRegistered' && this.entities.get(event.data.institution_id)?.kind === 'institution') return;
    this.fold(event.data.institution_id, effectsOf(event));
  }

  /** Check an event against the directory; fold it in when it passes. */
  check(event: DomainEvent): ReferenceProblem[] {
    return this.checkFacts(factsOf(event));
  }

  /** `check`, of what an event's facts say (see factsOf). */
  checkFacts({ type, institution, effects, problems: own, key }: EventFacts): ReferenceProblem[] {
    const problems: ReferenceProblem[] = [...own];
    if (type !== 'InstitutionRegistered' && institution !== this.lastInstitution) {
      const owner = this.entities.get(institution);
      if (!owner || owner.kind !== 'institution') {
        problems.push({ field: 'institution_id', message: `unknown institution ${institution}` });
      } else this.lastInstitution = institution;
    }
    const keyRefusal = key !== undefined ? this.keys.refusal(key) : undefined;
    if (keyRefusal) problems.push(keyRefusal);
    else if (effects.creates) {
      const existing = this.entities.get(effects.creates.id);
      if (existing) {
        problems.push({ field: effects.creates.field, message: `${existing.kind} ${effects.creates.id} already exists` });
      }
    }
    for (const r of [...effects.refs, ...(effects.ends ? [effects.ends] : [])]) {
      const entity = this.entities.get(r.id);
      if (!entity || entity.kind !== r.kind || entity.institution !== institution) {
        problems.push({ field: r.field, message: `unknown ${r.kind} ${r.id} in institution ${institution}` });
      } else if (entity.gone) {
        problems.push({ field: r.field, message: `${r.kind} ${r.id} no longer exists` });
      }
    }
    if (problems.length === 0) {
      if (key !== undefined) this.keys.record(key);
      this.fold(institution, effects);
    }
    return problems;
  }

  private fold(institution: string, effects: Effects): void {
    const made = effects.creates;
    if (made) this.entities.add(made.id, made.kind, institution);
    if (effects.ends) this.entities.end(effects.ends.id);
  }
}
