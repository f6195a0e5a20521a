/**
 * What the log holds, for `vm-api keys list` and `vm-api institutions list`:
 * a fold over every event of the log — the institutions and their names, the
 * API keys (a key issued again is refused, as the read model refuses it) and
 * how many records of each resource every institution holds.
 */
import { isCatalogEvent } from '../events/catalog.js';
import { KeyLedger } from '../events/key-ledger.js';
import { type EventStore, startOfLog } from '../eventstore/port.js';

export interface KeyListing {
  readonly keyId: string;
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
const counted: Readonly<Record<string, readonly [string, 1 | -1]>> = {
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

export const listedResources = ['shifts', 'opportunities', 'categories', 'profiles', 'reservations', 'form-submissions', 'sequences', 'user-sequences', 'sites'];

export async function listLog(store: EventStore): Promise<{ keys: Map<string, KeyListing>; institutions: Map<string, InstitutionListing> }> {
  const keys = new Map<string, KeyListing>();
  const institutions = new Map<string, InstitutionListing>();
  const ledger = new KeyLedger();
  let from = startOfLog;
  for (;;) {
    const batch = await store.readAll(from, 10_000);
    if (batch.length === 0) break;
    from = batch[batch.length - 1]!.position;
    for (const event of batch) {
      if (!isCatalogEvent(event)) continue;
      const data = event.data as { institution_id: string; occurred_at: string } & Record<string, unknown>;
      const institution = institutions.get(data.institution_id);
      switch (event.type) {
        case 'InstitutionRegistered':
          if (!institution) institutions.set(data.institution_id, { id: data.institution_id, name: String(data.name), records: new Map() });
          break;
        case 'InstitutionUpdated':
          if (institution && typeof data.name === 'string') institution.name = data.name;
          break;
        case 'ApiKeyIssued': {
          const key = { key_id: String(data.key_id), key_sha256: String(data.key_sha256) };
          if (ledger.issue(key) !== undefined) break;
          keys.set(key.key_id, { keyId: key.key_id, institution: data.institution_id, label: (data.label as string | null | undefined) ?? null, created: data.occurred_at, revoked: null });
          break;
        }
        case 'ApiKeyRevoked': {
          const key = keys.get(String(data.key_id));
          if (key && key.institution === data.institution_id && key.revoked === null) key.revoked = data.occurred_at;
          break;
        }
        default: {
          const effect = counted[event.type];
          if (effect && institution) institution.records.set(effect[0], (institution.records.get(effect[0]) ?? 0) + effect[1]);
        }
      }
    }
  }
  return { keys, institutions };
}

/** Rows as columns padded to their widest cell. */
export function table(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]!))).join('  ')).join('\n');
}
