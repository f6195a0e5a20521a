/**
 * The read model's records: what the projections fold the events into.
 * Records are immutable values (a change makes a new object), kept in
 * memory and persisted to LMDB. Timestamps are microseconds since the epoch.
 */

export interface InstitutionRecord {
  readonly id: string;
  readonly name: string;
  readonly share_base_url: string;
  readonly created_at: number;
  readonly updated_at: number;
}

export interface ApiKeyRecord {
  readonly id: string;
  readonly institution_id: string;
  readonly key_sha256: string;
  readonly label: string | null;
  readonly revoked: boolean;
  readonly created_at: number;
  readonly updated_at: number;
}

export interface CategoryRecord {
  readonly id: string;
  readonly institution_id: string;
  readonly title: string;
  readonly description: string;
  readonly created_at: number;
  readonly updated_at: number;
}

export type OpportunityStatus = 0 | 1 | 2;

export interface OpportunityRecord {
  readonly id: string;
  readonly institution_id: string;
  readonly category_id: string;
  readonly title: string;
  readonly description: string;
  readonly status: OpportunityStatus;
  readonly created_at: number;
  readonly updated_at: number;
}

export interface ShiftRecord {
  readonly id: string;
  readonly institution_id: string;
  readonly opportunity_id: string;
  readonly title: string;
  readonly description: string | null;
  readonly shift_start_at: number;
  readonly shift_end_at: number;
  readonly spots: number;
  readonly location: string;
  /** Active (not cancelled) reservations of the shift. */
  readonly spots_reserved: number;
  /** A removed shift leaves every list but stays for the reservations that nest it. */
  readonly removed: boolean;
  readonly created_at: number;
  readonly updated_at: number;
}

export interface ApprovedBy {
  readonly first_name: string;
  readonly last_name: string;
  readonly email: string;
}

export interface ReservationRecord {
  readonly id: string;
  readonly institution_id: string;
  readonly shift_id: string;
  readonly user_id: string;
  readonly status: 1 | 6;
  readonly logged_hours: number;
  readonly arrival_time: number | null;
  readonly departure_time: number | null;
  readonly hours_approved_by: ApprovedBy | null;
  readonly created_at: number;
  readonly updated_at: number;
}

/** Every kind of record, by name. */
export interface Records {
  institution: InstitutionRecord;
  apikey: ApiKeyRecord;
  category: CategoryRecord;
  opportunity: OpportunityRecord;
  shift: ShiftRecord;
  reservation: ReservationRecord;
}

export type Kind = keyof Records;
export type AnyRecord = Records[Kind];

export const kinds: readonly Kind[] = ['institution', 'apikey', 'category', 'opportunity', 'shift', 'reservation'];
