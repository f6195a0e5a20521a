/**
 * The event catalog: every domain event as a zod schema. It is also the
 * import and fixture format (NDJSON, one `{type, data, id?}` per line).
 * Unknown fields are rejected so that a typo never loses data silently.
 */
import { z } from 'zod';
import { parseDate, parseEventTimestamp } from '../time.js';

/** Record ids: UUIDs of any version, kept in lower case. */
export const id = z.guid({ error: 'must be a UUID' }).toLowerCase();

export const timestamp = z
  .string()
  .refine((s) => parseEventTimestamp(s) !== undefined, {
    error: 'must be a UTC timestamp YYYY-MM-DDTHH:MM:SS[.ffffff]Z',
  });

export const date = z.string().refine((s) => parseDate(s) !== undefined, {
  error: 'must be a date YYYY-MM-DD',
});

const text = z.string();
const int = z.number().int();
const count = int.nonnegative();

const base = { institution_id: id, occurred_at: timestamp };

const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, { error: 'must be 64 lower-case hex digits' });
const decimal = z.string().regex(/^\d{1,20}$/, { error: 'must be a decimal integer' });

/** An event type webhooks deliver (see isDeliverableType). */
export const deliverableType = z.string().refine((t) => isDeliverableType(t), {
  error: (issue) => `${JSON.stringify(issue.input)} is not an event type webhooks deliver`,
});

/** Where a webhook delivers (the API refuses more: see commands/webhooks.ts). */
export const webhookUrl = z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).max(2048);

const event = <T extends z.ZodRawShape>(shape: T) => z.strictObject({ ...base, ...shape });

// ── Shared value objects ───────────────────────────────────────────────────

export const personName = z.strictObject({ first_name: text, last_name: text, email: text });
export const emergencyContact = z.strictObject({ name: text, phone_number: text, relationship: text });
export const medicalInformation = z.strictObject({ description: text, has_medical_info: z.boolean() });
export const coordinates = z.tuple([text, text]);
export const customFieldOption = z.strictObject({ id, value: text, order: int });

const profileFields = {
  is_offline: z.boolean(),
  first_name: text,
  last_name: text,
  email: text,
  phone_number: text.optional(),
  date_of_birth: date.nullable().optional(),
  gender: int.nullable().optional(),
  gender_text: text.optional(),
  occupation: int.nullable().optional(),
  occupation_institution_name: text.optional(),
  address: text.optional(),
  latitude_longitude: coordinates.nullable().optional(),
  timezone: text.optional(),
  profile_image: text.optional(),
  is_following: z.boolean().optional(),
  emergency_contact: emergencyContact.nullable().optional(),
  medical_information: medicalInformation.nullable().optional(),
  skills: z.array(z.strictObject({ id, skill_title: text })).optional(),
  languages: z.array(z.strictObject({ id, language_name: text })).optional(),
};

export const questionAnswer = z.strictObject({
  id,
  question: z.strictObject({
    id: text,
    title: text,
    question_type: z.union([int, text]),
    options: z.array(text).optional(),
    allocation_input_type: int.optional(),
    allocation_total: z.string().regex(/^-?\d+(\.\d+)?$/, { error: 'must be a decimal string' }).optional(),
    allocation_decimal_places: count.optional(),
  }),
  answer: text.optional(),
  options: z.array(text).optional(),
  date: date.nullable().optional(),
  responded: z.boolean().optional(),
  allocation_values: z.record(text, z.string()).nullable().optional(),
  auto_populated_lists: z.array(z.strictObject({ id, title: text })).optional(),
});

const sequenceFields = {
  title: text,
  description: text,
  folder: z.strictObject({ id, name: text }),
  status: text,
  display_status: text,
};

export const userSequenceStatus = z.enum(['Active', 'Paused', 'Inactive', 'Finished']);

// ── The catalog ───────────────────────────────────────────────────────────

export const eventSchemas = {
  InstitutionRegistered: event({ name: text, share_base_url: z.url() }),
  /** A registered institution renamed or given another base of its share URLs (registering it again is refused). */
  InstitutionUpdated: event({ name: text.optional(), share_base_url: z.url().optional() }),
  ApiKeyIssued: event({
    key_id: id,
    key_sha256: z.string().regex(/^[0-9a-f]{64}$/, { error: 'must be 64 lower-case hex digits' }),
    label: text.nullable().optional(),
  }),
  ApiKeyRevoked: event({ key_id: id }),

  CategoryCreated: event({ category_id: id, title: text, description: text }),
  CategoryUpdated: event({ category_id: id, title: text.optional(), description: text.optional() }),

  OpportunityCreated: event({
    opportunity_id: id,
    category_id: id,
    title: text,
    description: text,
    status: z.union([z.literal(0), z.literal(1), z.literal(2)]),
  }),
  OpportunityUpdated: event({
    opportunity_id: id,
    title: text.optional(),
    description: text.optional(),
    category_id: id.optional(),
  }),
  OpportunityStatusChanged: event({
    opportunity_id: id,
    status: z.union([z.literal(0), z.literal(1), z.literal(2)]),
  }),

  ShiftCreated: event({
    shift_id: id,
    opportunity_id: id,
    title: text,
    description: text.nullable(),
    shift_start_at: timestamp,
    shift_end_at: timestamp,
    spots: count,
    location: text.nullable().optional(),
  }),
  ShiftUpdated: event({
    shift_id: id,
    title: text.optional(),
    description: text.nullable().optional(),
    shift_start_at: timestamp.optional(),
    shift_end_at: timestamp.optional(),
    spots: count.optional(),
    location: text.nullable().optional(),
  }),
  ShiftRemoved: event({ shift_id: id }),

  ProfileCreated: event({ profile_id: id, ...profileFields }),
  ProfileUpdated: event({ profile_id: id, ...z.object(profileFields).partial().shape }),
  ProfileTagged: event({
    profile_id: id,
    profile_tag_id: id,
    tag: z.strictObject({ id, tag_title: text }),
  }),
  ProfileUntagged: event({ profile_id: id, profile_tag_id: id }),

  CustomFieldDefined: event({
    custom_field_id: id,
    name: text,
    field_type: int,
    is_active: z.boolean(),
    options: z.array(customFieldOption).optional(),
  }),
  CustomFieldUpdated: event({
    custom_field_id: id,
    name: text.optional(),
    field_type: int.optional(),
    is_active: z.boolean().optional(),
    options: z.array(customFieldOption).optional(),
  }),
  ProfileCustomFieldAnswered: event({
    profile_id: id,
    entry_id: id,
    custom_field_id: id,
    value: z
      .strictObject({
        id,
        value: z.union([z.boolean(), text]),
        value_info: z.json().optional(),
      })
      .optional(),
    selections: z.array(z.strictObject({ id, option_id: id })).optional(),
  }),
  ProfileOpportunityAdded: event({ profile_id: id, entry_id: id, opportunity_id: id }),

  ReservationCreated: event({ reservation_id: id, shift_id: id, user_id: id }),
  HoursLogged: event({
    reservation_id: id,
    logged_hours: z.number().nonnegative(),
    arrival_time: timestamp.nullable().optional(),
    departure_time: timestamp.nullable().optional(),
    approved_by: personName.nullable().optional(),
  }),
  ReservationCancelled: event({ reservation_id: id }),

  FormSubmitted: event({
    submission_id: id,
    user_id: id,
    form: z.strictObject({ id: text, title: text }),
    folder: z.strictObject({ name: text }),
    submission_status: text.optional(),
    site_ids: z.array(id).optional(),
    category_ids: z.array(id).optional(),
    arrival_source_opportunity_id: id.nullable().optional(),
    questions: z.array(questionAnswer).optional(),
    medical_info: z.json().optional(),
    emergency_contact: emergencyContact.nullable().optional(),
    digital_consent: z
      .array(z.strictObject({ id, digital_consent_info: z.json().optional(), consent_status: int }))
      .optional(),
    general_availability: z.array(z.strictObject({ id, day: int, availability: text })).optional(),
    attachments: z
      .array(
        z.strictObject({
          id,
          document_file: text.nullable().optional(),
          notes: text.optional(),
          attachment_info: z.strictObject({ id, title: text, description: text }),
        }),
      )
      .optional(),
    opportunities: z
      .array(z.strictObject({ opportunity_id: id, opportunity_shifts_count: count }))
      .optional(),
  }),
  FormSubmissionStatusChanged: event({ submission_id: id, submission_status: text }),

  SequenceCreated: event({ sequence_id: id, ...sequenceFields }),
  SequenceUpdated: event({ sequence_id: id, ...z.object(sequenceFields).partial().shape }),
  SequenceStepAdded: event({
    sequence_id: id,
    step_id: id,
    step: int,
    type: int,
    type_display: text,
    step_details: z.array(z.strictObject({ id, title: text, description: text })),
  }),
  SequenceStepRemoved: event({ sequence_id: id, step_id: id }),

  UserSequenceStarted: event({
    user_sequence_id: id,
    sequence_id: id,
    user_id: id,
    status: userSequenceStatus.optional(),
  }),
  UserSequenceStatusChanged: event({ user_sequence_id: id, status: userSequenceStatus }),
  UserSequenceStepUpdated: event({
    user_sequence_id: id,
    step_detail_id: id,
    status: int,
    completion_date: timestamp.nullable().optional(),
    expiration_date: timestamp.nullable().optional(),
  }),

  SiteCreated: event({ site_id: id, title: text, address: text.optional() }),
  UserAssignedToSite: event({ site_id: id, user_id: id }),
  UserUnassignedFromSite: event({ site_id: id, user_id: id }),
  /**
   * A sites request made with an Idempotency-Key, appended with the events it
   * decided (in the same append): a retry with the same key answers this
   * response again; the same key with another body is refused.
   */
  SiteRequestHandled: event({
    idempotency_key: z.string().min(1).max(255),
    request_sha256: z.string().regex(/^[0-9a-f]{64}$/, { error: 'must be 64 lower-case hex digits' }),
    status: int,
    response: z.json(),
  }),

  // ── Webhooks (never delivered to webhooks, never in the change feed) ──
  /**
   * A subscription: events of the institution after this one (of
   * event_types, or all when empty) are POSTed to url, signed with secret
   * (`whsec_…` as is, or `aes256gcm:…` encrypted with WEBHOOK_SECRET_KEY).
   * request_sha256: the request's hash when made with an Idempotency-Key.
   */
  WebhookSubscribed: event({
    webhook_id: id,
    url: webhookUrl,
    event_types: z.array(deliverableType),
    secret: z.string().min(1),
    request_sha256: sha256Hex.optional(),
  }),
  WebhookUnsubscribed: event({ webhook_id: id }),
  /** Deliveries stop (the last attempt failed); the cursor stays. */
  WebhookPaused: event({ webhook_id: id, reason: text }),
  WebhookResumed: event({ webhook_id: id }),
  /** One delivery attempt of one event: status_code null on a network error; a 2xx moves the cursor to event_position. */
  WebhookAttempted: event({
    webhook_id: id,
    event_id: z.string().min(1).max(100),
    event_position: z.strictObject({ commit: decimal, prepare: decimal }),
    attempt: int.min(1),
    status_code: int.min(100).max(999).nullable(),
    error: text.nullable(),
    duration_ms: z.number().nonnegative(),
  }),
} as const;

type Schemas = typeof eventSchemas;
export type EventType = keyof Schemas;

/** The data of one event type, as validated (ids in lower case). */
export type EventData<T extends EventType> = z.output<Schemas[T]>;

/** A domain event: its type and data. */
export type DomainEvent = { [T in EventType]: { type: T; data: EventData<T> } }[EventType];
export type EventOf<T extends EventType> = Extract<DomainEvent, { type: T }>;

export function isEventType(type: string): type is EventType {
  return Object.hasOwn(eventSchemas, type);
}

/** The webhooks' own events: never delivered to webhooks, never in the change feed. */
export const webhookEventTypes = ['WebhookSubscribed', 'WebhookUnsubscribed', 'WebhookPaused', 'WebhookResumed', 'WebhookAttempted'] as const;

/**
 * Types webhooks never deliver: their own, the keys' (credentials) and
 * the record of an idempotent sites request (the service's bookkeeping).
 */
const undelivered: ReadonlySet<string> = new Set([...webhookEventTypes, 'ApiKeyIssued', 'ApiKeyRevoked', 'SiteRequestHandled']);

/** Whether webhooks deliver events of this type (a type of the catalog, not one of the undelivered). */
export function isDeliverableType(type: string): boolean {
  return !undelivered.has(type) && Object.hasOwn(eventSchemas, type);
}

/** Every type webhooks deliver, in catalog order. */
export const deliverableTypes = (Object.keys(eventSchemas) as EventType[]).filter(isDeliverableType);

/** The stream of one webhook subscription: its subscription, pauses, resumes and every delivery attempt. */
export const webhookStream = (webhookId: string) => `webhook-${webhookId}`;

/** The stream of everything about one institution's sites. */
export const siteRegistryStream = (institutionId: string) => `site-registry-${institutionId}`;

/**
 * The stream an event belongs to: the aggregate it changes. Everything about
 * sites lives in one registry stream per institution, so that title
 * uniqueness and memberships are decided against one expected revision.
 */
export function streamOf(event: DomainEvent): string {
  switch (event.type) {
    case 'InstitutionRegistered':
    case 'InstitutionUpdated':
      return `institution-${event.data.institution_id}`;
    case 'ApiKeyIssued':
    case 'ApiKeyRevoked':
      return `apikey-${event.data.key_id}`;
    case 'CategoryCreated':
    case 'CategoryUpdated':
      return `category-${event.data.category_id}`;
    case 'OpportunityCreated':
    case 'OpportunityUpdated':
    case 'OpportunityStatusChanged':
      return `opportunity-${event.data.opportunity_id}`;
    case 'ShiftCreated':
    case 'ShiftUpdated':
    case 'ShiftRemoved':
      return `shift-${event.data.shift_id}`;
    case 'ProfileCreated':
    case 'ProfileUpdated':
    case 'ProfileTagged':
    case 'ProfileUntagged':
    case 'ProfileCustomFieldAnswered':
    case 'ProfileOpportunityAdded':
      return `profile-${event.data.profile_id}`;
    case 'CustomFieldDefined':
    case 'CustomFieldUpdated':
      return `customfield-${event.data.custom_field_id}`;
    case 'ReservationCreated':
    case 'HoursLogged':
    case 'ReservationCancelled':
      return `reservation-${event.data.reservation_id}`;
    case 'FormSubmitted':
    case 'FormSubmissionStatusChanged':
      return `formsubmission-${event.data.submission_id}`;
    case 'SequenceCreated':
    case 'SequenceUpdated':
    case 'SequenceStepAdded':
    case 'SequenceStepRemoved':
      return `sequence-${event.data.sequence_id}`;
    case 'UserSequenceStarted':
    case 'UserSequenceStatusChanged':
    case 'UserSequenceStepUpdated':
      return `usersequence-${event.data.user_sequence_id}`;
    case 'SiteCreated':
    case 'UserAssignedToSite':
    case 'UserUnassignedFromSite':
    case 'SiteRequestHandled':
      return siteRegistryStream(event.data.institution_id);
    case 'WebhookSubscribed':
    case 'WebhookUnsubscribed':
    case 'WebhookPaused':
    case 'WebhookResumed':
    case 'WebhookAttempted':
      return webhookStream(event.data.webhook_id);
    default: {
      const unreachable: never = event;
      throw new Error(`no stream for ${JSON.stringify(unreachable)}`);
    }
  }
}

/** Stream name prefixes this application writes (used to filter a shared log). */
export const streamPrefixes = [
  'institution-',
  'apikey-',
  'category-',
  'opportunity-',
  'shift-',
  'profile-',
  'customfield-',
  'reservation-',
  'formsubmission-',
  'sequence-',
  'usersequence-',
  'site-registry-',
  'webhook-',
] as const;

/** Parse one event's data against its schema. */
export function parseEvent(type: EventType, data: unknown) {
  return eventSchemas[type].safeParse(data);
}

/** Whether a recorded event is one of the catalog's: of a catalog type, and not found invalid by its store. */
export function isCatalogEvent<E extends { readonly type: string; readonly invalid?: string }>(event: E): event is E & { readonly type: EventType } {
  return isEventType(event.type) && event.invalid === undefined;
}

/** A recorded event as one of the catalog's, if it is one (see isCatalogEvent). */
export function domainEvent(event: { readonly type: string; readonly data: unknown; readonly invalid?: string }): DomainEvent | undefined {
  return isCatalogEvent(event) ? ({ type: event.type, data: event.data } as DomainEvent) : undefined;
}
