/**
 * The read model's records: what the projections fold the events into.
 * Records are immutable values (a change makes a new object), kept in
 * memory and persisted to LMDB. Timestamps are microseconds since the epoch.
 */
import type { EventData } from '../src/events/catalog.js';

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
  /** The shift's, as it is now (what reservation searches filter and sort on): its opportunity never changes, its start may. */
  readonly opportunity_id: string;
  readonly shift_start_at: number;
  readonly user_id: string;
  readonly status: 1 | 6;
  readonly logged_hours: number;
  readonly arrival_time: number | null;
  readonly departure_time: number | null;
  readonly hours_approved_by: ApprovedBy | null;
  readonly created_at: number;
  readonly updated_at: number;
}

export interface CustomFieldOption {
  readonly id: string;
  readonly value: string;
  readonly order: number;
}

/** A custom profile field an institution defined. */
export interface CustomFieldRecord {
  readonly id: string;
  readonly institution_id: string;
  readonly name: string;
  readonly field_type: number;
  readonly is_active: boolean;
  /** undefined when the definition never listed options. */
  readonly options: readonly CustomFieldOption[] | undefined;
  readonly created_at: number;
  readonly updated_at: number;
}

/** A profile's answer to a custom field: one value, or options selected. */
export interface CustomFieldAnswer {
  readonly id: string;
  readonly custom_field_id: string;
  readonly created_at: number;
  readonly value: { readonly id: string; readonly value: boolean | string; readonly value_info?: unknown } | null;
  readonly selections: ReadonlyArray<{ readonly id: string; readonly option_id: string }> | null;
}

export interface ProfileRecord {
  readonly id: string;
  readonly institution_id: string;
  readonly is_offline: boolean;
  readonly first_name: string;
  readonly last_name: string;
  readonly email: string;
  readonly phone_number: string;
  /** Days since the epoch. */
  readonly date_of_birth: number | null;
  readonly gender: number | null;
  readonly gender_text: string;
  readonly occupation: number | null;
  readonly occupation_institution_name: string;
  readonly address: string;
  readonly latitude_longitude: readonly [string, string] | null;
  readonly timezone: string;
  readonly profile_image: string;
  readonly is_following: boolean;
  readonly emergency_contact: { readonly name: string; readonly phone_number: string; readonly relationship: string } | null;
  readonly medical_information: { readonly description: string; readonly has_medical_info: boolean } | null;
  readonly skills: ReadonlyArray<{ readonly id: string; readonly skill_title: string }>;
  readonly languages: ReadonlyArray<{ readonly id: string; readonly language_name: string }>;
  readonly tags: ReadonlyArray<{ readonly id: string; readonly tag: { readonly id: string; readonly tag_title: string } }>;
  readonly custom_fields: readonly CustomFieldAnswer[];
  /** Opportunities joined: entry id and opportunity id. */
  readonly opportunities: ReadonlyArray<{ readonly id: string; readonly opportunity_id: string }>;
  /** From reservations with hours logged (cancelled ones count nowhere). */
  readonly logged_hours: number;
  readonly completed_shifts: number;
  readonly created_at: number;
  readonly updated_at: number;
}

type Submitted = EventData<'FormSubmitted'>;

export interface FormSubmissionRecord {
  readonly id: string;
  readonly institution_id: string;
  readonly user_id: string;
  readonly form: Submitted['form'];
  readonly folder: Submitted['folder'];
  readonly submission_status: string;
  readonly site_ids: readonly string[];
  readonly category_ids: readonly string[];
  readonly arrival_source_opportunity_id: string | null;
  readonly questions: NonNullable<Submitted['questions']>;
  readonly medical_info: unknown;
  readonly emergency_contact: Submitted['emergency_contact'] | null;
  readonly digital_consent: NonNullable<Submitted['digital_consent']>;
  readonly general_availability: NonNullable<Submitted['general_availability']>;
  readonly attachments: NonNullable<Submitted['attachments']>;
  readonly opportunities: NonNullable<Submitted['opportunities']>;
  readonly created_at: number;
  readonly updated_at: number;
}

export interface SequenceStep {
  readonly id: string;
  readonly step: number;
  readonly type: number;
  readonly type_display: string;
  readonly step_details: ReadonlyArray<{ readonly id: string; readonly title: string; readonly description: string }>;
}

export type UserSequenceStatus = 'Active' | 'Paused' | 'Inactive' | 'Finished';

export interface SequenceRecord {
  readonly id: string;
  readonly institution_id: string;
  readonly title: string;
  readonly description: string;
  readonly folder: { readonly id: string; readonly name: string };
  readonly status: string;
  readonly display_status: string;
  /** In step order. */
  readonly steps: readonly SequenceStep[];
  /** How many of its user sequences are in each status. */
  readonly users: Readonly<Record<UserSequenceStatus, number>>;
  readonly created_at: number;
  readonly updated_at: number;
}

export interface UserSequenceStepProgress {
  readonly status: number;
  readonly completion_date: number | null;
  readonly expiration_date: number | null;
}

export interface UserSequenceRecord {
  readonly id: string;
  readonly institution_id: string;
  readonly sequence_id: string;
  readonly user_id: string;
  readonly status: UserSequenceStatus;
  /** By step detail id. */
  readonly progress: Readonly<Record<string, UserSequenceStepProgress>>;
  readonly created_at: number;
  readonly updated_at: number;
}

export interface SiteRecord {
  readonly id: string;
  readonly institution_id: string;
  readonly title: string;
  readonly address: string;
  /** Profiles assigned to the site, in assignment order. */
  readonly user_ids: readonly string[];
  readonly created_at: number;
  readonly updated_at: number;
}

export type WebhookStatus = 'active' | 'paused';

/** A webhook subscription (see projections/webhooks.ts). */
export interface WebhookRecord {
  readonly id: string;
  readonly institution_id: string;
  readonly url: string;
  /** Event types delivered (empty: every deliverable type). */
  readonly event_types: readonly string[];
  readonly status: WebhookStatus;
  /** As stored in the log: `whsec_…`, or encrypted (src/webhooks/secrets.ts). */
  readonly secret: string;
  /** The log position of the last event delivered with a 2xx (at first: of the subscription itself). */
  readonly cursor_commit: number;
  readonly cursor_prepare: number;
  /** Failed attempts since the last 2xx or resume: the next attempt is number failures + 1. */
  readonly failures: number;
  /** Attempts recorded: they are the webhookdelivery records `<id>/0` … `<id>/<deliveries - 1>`. */
  readonly deliveries: number;
  readonly created_at: number;
  readonly updated_at: number;
}

/** One delivery attempt of a webhook, under `<webhook id>/<n>` (n from 0, in the order made). */
export interface WebhookDeliveryRecord {
  readonly id: string;
  readonly institution_id: string;
  readonly webhook_id: string;
  readonly event_id: string;
  readonly attempt: number;
  readonly status_code: number | null;
  readonly error: string | null;
  readonly duration_ms: number;
  /** When the attempt was made (delivered_at), as every record has it. */
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
  profile: ProfileRecord;
  customfield: CustomFieldRecord;
  formsubmission: FormSubmissionRecord;
  sequence: SequenceRecord;
  usersequence: UserSequenceRecord;
  site: SiteRecord;
  webhook: WebhookRecord;
  webhookdelivery: WebhookDeliveryRecord;
}

export type Kind = keyof Records;
export type AnyRecord = Records[Kind];

export const kinds: readonly Kind[] = [
  'institution',
  'apikey',
  'category',
  'opportunity',
  'shift',
  'reservation',
  'profile',
  'customfield',
  'formsubmission',
  'sequence',
  'usersequence',
  'site',
  'webhook',
  'webhookdelivery',
];
