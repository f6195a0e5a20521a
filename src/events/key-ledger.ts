/**
 * A key belongs to one institution for ever: the ledger of every API key
 * the log has issued so far (revoked ones included), and the rule that an
 * ApiKeyIssued repeating a key_id or a key_sha256 already issued issues
 * nothing. The importer refuses such a line; the fold skips such an event
 * (another writer of an EventStoreDB log may append one) and logs it.
 *
 * The rule reads the whole log before the event, not one institution's
 * part of it: every replay worker feeds its ledger every event it reads.
 */
import type { EventData } from './catalog.js';

type Issued = Pick<EventData<'ApiKeyIssued'>, 'key_id' | 'key_sha256'>;

export interface KeyRefusal {
  readonly field: 'key_id' | 'key_sha256';
  readonly message: string;
}

export class KeyLedger {
  /** key_sha256 → the key_id it was issued as. */
  private readonly holders = new Map<string, string>();
  private readonly ids = new Set<string>();

  /** Why this key cannot be issued, or undefined when it is new in both id and hash. */
  refusal(key: Issued): KeyRefusal | undefined {
    if (this.ids.has(key.key_id)) return { field: 'key_id', message: `key ${key.key_id} was already issued` };
    const holder = this.holders.get(key.key_sha256);
    if (holder !== undefined) {
      return { field: 'key_sha256', message: `this key was already issued (key ${holder}); a key is never issued twice` };
    }
    return undefined;
  }

  record(key: Issued): void {
    this.ids.add(key.key_id);
    this.holders.set(key.key_sha256, key.key_id);
  }

  /** Record the key if it may be issued; else why not (and nothing is recorded). */
  issue(key: Issued): KeyRefusal | undefined {
    const refusal = this.refusal(key);
    if (refusal === undefined) this.record(key);
    return refusal;
  }
}
