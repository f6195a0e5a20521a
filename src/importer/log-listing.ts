/**
 * What the log holds, for `vm-api keys list`, `keys issue`, `keys revoke`
 * and `institutions list`: a fold over the events of the log — the
 * institutions and their names, the API keys (a key issued again is refused,
 * as the read model refuses it) and how many records of each resource every
 * institution holds. It is part of the summary of the log an import keeps
 * (log-summary.ts), so that those commands read only the log after it.
 */
import { z } from 'zod';
import type { EventType } from '../events/catalog.js';
import { KeyLedger } from '../events/key-ledger.js';

export interface KeyListing {
  readonly keyId: string;
  /** The key's hash (never shown: the reference checks' ledger is made again from it, see log-summary.ts). */
  readonly sha256: string;
  readonly institution: string;
  readonly label: string | null;
  readonly created: string;
  revoked: string | null;
}

export interface InstitutionListing {
  readonly id: string;
  name: string;
  /** Records per resource (its path name). */
  readonly records: Map<string, number>;
}

/** The resource (path name) an event type creates (+1) or removes (-1) a record of. */
const counted: Readonly<Partial<Record<EventType, readonly [string, 1 | -1]>>> = {
  CategoryCreated: ['categories', 1],
  OpportunityCreated: ['opportunities', 1],
  ShiftCreated: ['shifts', 1],
  ShiftRemoved: ['shifts', -1],
  ProfileCreated: ['profiles', 1],
  ReservationCreated: ['reservations', 1],
  ReservationCancelled: ['reservations', -1],
  FormSubmitted: ['form-submissions', 1],
  SequenceCreated: ['sequences', 1],
  UserSequenceStarted: ['user-sequences', 1],
  SiteCreated: ['sites', 1],
};

/** A LogListing as a summary of the log keeps it (log-summary.ts). */
export const savedListing = z.object({
  keys: z.array(z.object({ keyId: z.string(), institution: z.string(), label: z.string().nullable(), created: z.string(), revoked: z.string().nullable(), sha256: z.string() })),
  institutions: z.array(z.object({ id: z.string(), name: z.string(), records: z.array(z.tuple([z.string(), z.number().int()])) })),
});
export type SavedListing = z.infer<typeof savedListing>;

/** The fold: institutions, keys, records per resource, as of the events folded so far. */
export class LogListing {
  readonly keys = new Map<string, KeyListing>();
  readonly institutions = new Map<string, InstitutionListing>();
  private readonly ledger = new KeyLedger();

  constructor(saved?: SavedListing) {
    for (const key of saved?.keys ?? []) {
      this.ledger.record({ key_id: key.keyId, key_sha256: key.sha256 });
      this.keys.set(key.keyId, key);
    }
    for (const i of saved?.institutions ?? []) this.institutions.set(i.id, { id: i.id, name: i.name, records: new Map(i.records) });
  }

  /** An event of the log (or one an import appends): `data` is read only for the few types whose data the listing shows. */
  fold(type: EventType, institutionId: string, data: () => Readonly<Record<string, unknown>>): void {
    const institution = this.institutions.get(institutionId);
    switch (type) {
      case 'InstitutionRegistered':
        if (!institution) this.institutions.set(institutionId, { id: institutionId, name: String(data().name), records: new Map() });
        break;
      case 'InstitutionUpdated': {
        const { name } = data();
        if (institution && typeof name === 'string') institution.name = name;
        break;
      }
      case 'ApiKeyIssued': {
        const d = data();
        const key = { key_id: String(d.key_id), key_sha256: String(d.key_sha256) };
        if (this.ledger.issue(key) !== undefined) break;
        this.keys.set(key.key_id, { keyId: key.key_id, sha256: key.key_sha256, institution: institutionId, label: (d.label as string | null | undefined) ?? null, created: String(d.occurred_at), revoked: null });
        break;
      }
      case 'ApiKeyRevoked': {
        const d = data();
        const key = this.keys.get(String(d.key_id));
        if (key && key.institution === institutionId && key.revoked === null) key.revoked = String(d.occurred_at);
        break;
      }
      default: {
        const effect = counted[type];
        if (effect && institution) institution.records.set(effect[0], (institution.records.get(effect[0]) ?? 0) + effect[1]);
      }
    }
  }

  saved(): SavedListing {
    return {
      keys: [...this.keys.values()],
      institutions: [...this.institutions.values()].map(({ id, name, records }) => ({ id, name, records: [...records] })),
    };
  }
}
