/**
 * The records as the API shows them, in zod: what SPEC.md's field tables
 * say, as our JSON writers (src/resources/) emit it. The JSON is assembled
 * by hand for speed, so these schemas are its contract, not its source:
 * the OpenAPI document is generated from them, and the tests validate every
 * snapshot answer against them (ajv), which keeps the two in step. Each has
 * an id: it becomes a component of the document.
 */
import { z } from 'zod';
import { deliverableTypes, eventSchemas, type EventType } from '../../events/catalog.js';
import { feedResources } from '../../events/subjects.js';

const uuid = z.string().meta({ format: 'uuid' });
const timestamp = z.string().meta({ format: 'date-time', description: 'RFC 3339, UTC' });
const date = z.string().meta({ format: 'date' });
const url = z.string().meta({ format: 'uri' });
const integer = z.int();
const titled = z.object({ id: uuid, title: z.string() });
/** Two decimal strings, [latitude, longitude]. */
const coordinates = z.array(z.string());

export const category = z.object({ id: uuid, title: z.string(), description: z.string() }).meta({ id: 'Category' });

export const opportunity = z
  .object({
    id: uuid,
    created_at: timestamp,
    category,
    title: z.string(),
    description: z.string(),
    share_opportunity_url: url.nullable().meta({ description: 'null when the role is not published' }),
  })
  .meta({ id: 'Opportunity' });

/** An opportunity nested in a reservation or a form submission (no created_at, no share URL). */
export const plainOpportunity = z.object({ id: uuid, category, title: z.string(), description: z.string() }).meta({ id: 'PlainOpportunity' });

export const shift = z
  .object({
    id: uuid,
    created_at: timestamp,
    shift_start_at: timestamp,
    shift_end_at: timestamp,
    spots: integer.meta({ description: 'total capacity' }),
    spots_reserved: integer,
    spots_available: integer,
    opportunity,
    shift_location: z.string(),
    shift_title: z.string(),
    shift_description: z.string().nullable(),
    share_shift_url: url,
    title: z.string().meta({ description: 'alias of shift_title' }),
    description: z.string().nullable().meta({ description: 'alias of shift_description' }),
  })
  .meta({ id: 'Shift' });

export const userSummary = z
  .object({
    id: uuid,
    first_name: z.string(),
    last_name: z.string(),
    email: z.string(),
    gender: integer.nullable(),
    address: z.string(),
    phone_number: z.string(),
    date_of_birth: date.nullable(),
    timezone: z.string().meta({ description: 'IANA zone name' }),
    address_coordinates: coordinates.nullable(),
  })
  .meta({ id: 'UserSummary' });

export const reservation = z
  .object({
    id: uuid,
    shift: z
      .object({
        id: uuid,
        created_at: timestamp,
        shift_start_at: timestamp,
        shift_end_at: timestamp,
        spots: integer,
        shift_title: z.string(),
        shift_description: z.string().nullable(),
      })
      .meta({ id: 'ReservationShift' }),
    created_at: timestamp,
    status: integer,
    logged_hours: z.number().meta({ description: 'decimal hours' }),
    arrival_time: timestamp.nullable(),
    departure_time: timestamp.nullable(),
    hours_approved_by: z.object({ first_name: z.string(), last_name: z.string(), email: z.string() }).nullable(),
    user: userSummary,
    opportunity: plainOpportunity,
  })
  .meta({ id: 'Reservation' });

const option = z.object({ id: uuid, value: z.string(), order: integer });

const customField = z.object({
  id: uuid,
  custom_field: z.object({ id: uuid, name: z.string(), field_type: integer, is_active: z.boolean(), options: z.array(option).optional() }),
  created_at: timestamp,
  custom_field_value: z.union([
    z.object({ id: uuid, value: z.union([z.boolean(), z.string()]), value_info: z.unknown().optional() }),
    z.array(z.object({ id: uuid, value: option })),
    z.null(),
  ]),
});

export const profile = z
  .object({
    id: uuid,
    logged_hours: z.number(),
    is_offline: z.boolean(),
    is_following: z.boolean(),
    emergency_contact: z.object({ name: z.string(), phone_number: z.string(), relationship: z.string() }).nullable(),
    medical_information: z.object({ description: z.string(), has_medical_info: z.boolean() }).nullable(),
    profile_details: z.object({
      first_name: z.string(),
      last_name: z.string(),
      full_name: z.string(),
      email: z.string(),
      profile_image: z.string(),
      phone_number: z.string(),
      date_of_birth: date.nullable(),
      gender: integer.nullable(),
      gender_text: z.string(),
      occupation: integer.nullable(),
      occupation_institution_name: z.string(),
      skills: z.array(z.object({ id: uuid, skill_title: z.string() })),
      languages: z.array(z.object({ id: uuid, language_name: z.string() })),
      address: z.string(),
      latitude_longitude: coordinates.nullable(),
      address_coordinates: coordinates.optional().meta({ description: 'in list and search results only' }),
      created_at: timestamp.optional().meta({ description: 'in list and search results only' }),
      age: integer.nullable(),
    }),
    opportunities: z.array(
      z.object({ id: uuid, opportunity: z.object({ id: uuid, title: z.string(), category: z.object({ title: z.string() }).nullable() }) }),
    ),
    most_recent_shift: z.null(),
    completed_shifts: integer,
    profile_tags: z.array(z.object({ id: uuid, tag: z.object({ id: uuid, tag_title: z.string() }) })),
    custom_fields: z.array(customField),
  })
  .meta({ id: 'Profile' });

const question = z.object({
  id: uuid,
  question: z.object({
    id: z.string().meta({ description: 'the form\'s own id of the question' }),
    title: z.string(),
    question_type: z.union([integer, z.string()]),
    options: z.array(z.string()),
    allocation_input_type: integer.optional(),
    allocation_total: z.string().optional(),
    allocation_decimal_places: integer.optional(),
  }),
  answer: z.string(),
  options: z.array(z.string()),
  date: date.nullable().optional(),
  responded: z.boolean(),
  allocation_values: z.record(z.string(), z.string()).nullable().optional(),
  auto_populated_lists: z.array(titled).optional(),
});

export const formSubmission = z
  .object({
    id: uuid,
    user: userSummary,
    submission_status: z.string(),
    created_at: timestamp,
    sites: z.array(titled),
    categories: z.array(titled),
    arrival_source: z
      .object({ id: uuid, category: category.nullable().optional(), title: z.string(), description: z.string() })
      .nullable(),
    questions: z.array(question),
    medical_info: z.null(),
    emergency_contact: z.object({ name: z.string(), phone_number: z.string(), relationship: z.string() }).nullable(),
    digital_consent: z.array(z.object({ id: uuid, digital_consent_info: z.null(), consent_status: integer })),
    general_availability: z.array(z.object({ id: uuid, day: integer, availability: z.string() })),
    attachments: z.array(
      z.object({ id: uuid, document_file: z.null(), notes: z.string(), attachment_info: z.object({ id: uuid, title: z.string(), description: z.string() }) }),
    ),
    opportunities: z.array(z.object({ opportunity: plainOpportunity, opportunity_shifts_count: integer })),
    folder: z.object({ name: z.string() }),
    form: z.object({ id: z.string().meta({ description: 'the form\'s own id' }), title: z.string() }),
  })
  .meta({ id: 'FormSubmission' });

export const sequence = z
  .object({
    id: uuid,
    created_at: timestamp,
    updated_at: timestamp,
    title: z.string(),
    description: z.string(),
    folder: z.object({ id: uuid, name: z.string() }),
    status: z.string(),
    display_status: z.string(),
    number_users_active: integer,
    number_users_paused: integer,
    number_users_inactive: integer,
    number_users_finished: integer,
    number_active_steps: integer,
    step_info: z.array(
      z.object({
        id: uuid,
        step: integer,
        type: integer,
        type_display: z.string(),
        step_details: z.array(z.object({ id: uuid, title: z.string(), description: z.string() })),
      }),
    ),
  })
  .meta({ id: 'Sequence' });

export const userSequence = z
  .object({
    id: uuid,
    user_info: userSummary,
    sequence_info: z.object({
      id: uuid,
      title: z.string(),
      description: z.string().meta({ description: 'HTML' }),
      sequence_status: z.string(),
      display_status: z.string(),
      step_info: z.array(
        z.object({
          step: integer,
          type: integer,
          step_details: z.array(
            z.object({
              title: z.string(),
              description: z.string(),
              user_sequence_info: z.object({
                id: uuid,
                status: integer,
                completion_date: timestamp.nullable(),
                expiration_date: timestamp.nullable(),
                attachment_added: z.null(),
              }),
            }),
          ),
        }),
      ),
    }),
    status: z.string(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'UserSequence' });

export const site = z
  .object({
    id: uuid,
    title: z.string(),
    address: z.string(),
    created_at: timestamp,
    updated_at: timestamp,
    users_count: integer.meta({ description: 'profiles assigned to the site' }),
  })
  .meta({ id: 'Site' });

/** The paginated envelope around a page of records. */
export function page<T extends z.ZodType>(record: T, id: string) {
  return z
    .object({
      count: integer.meta({ description: 'total matching records' }),
      next: url.nullable(),
      previous: url.nullable(),
      results: z.array(record),
    })
    .meta({ id });
}

/** Every error answer: a message for a human. */
export const detail = z.object({ detail: z.string() }).meta({ id: 'Detail' });

export const bulkCreated = z.object({ count: integer, results: z.array(site) }).meta({ id: 'SitesCreated' });
export const assigned = z.object({ assigned: integer, already_assigned: integer }).meta({ id: 'UsersAssigned' });
export const unassigned = z.object({ unassigned: integer, not_assigned: integer }).meta({ id: 'UsersUnassigned' });

/** One entry of the change feed. */
export const change = z
  .object({
    cursor: z.string().meta({ description: 'Opaque: pass it as after= to read on from this entry' }),
    type: z.enum(Object.keys(eventSchemas) as [EventType, ...EventType[]]).meta({ description: 'The event type (DESIGN.md\'s catalog)' }),
    resource: z.enum(feedResources).meta({ description: 'The path name of the resource the record is of (institutions and custom-fields have no route: their changes show in the records that nest them)' }),
    id: uuid.meta({ description: 'The record the event is about (the site for an assignment, the reservation for HoursLogged)' }),
    occurred_at: timestamp,
  })
  .meta({ id: 'Change' });

export const changesPage = z
  .object({
    results: z.array(change),
    next_cursor: z.string().nullable().meta({ description: 'The last result\'s cursor, or the after= given when nothing is new (null: nothing yet, from the start)' }),
  })
  .meta({ id: 'ChangesPage' });

// ── Webhooks ───────────────────────────────────────────────────────────────

const webhookFields = {
  id: uuid,
  url,
  event_types: z.array(z.enum(deliverableTypes as [EventType, ...EventType[]])).meta({ description: 'The event types delivered (empty: every type webhooks deliver)' }),
  status: z.enum(['active', 'paused']).meta({ description: 'paused: the last attempt of an event failed; resume continues from that event' }),
  created_at: timestamp,
};

export const webhook = z.object(webhookFields).meta({ id: 'Webhook' });

export const webhookCreated = z
  .object({
    ...webhookFields,
    secret: z.string().meta({ description: 'whsec_ + base64 of 24 random bytes: verifies the signatures (Standard Webhooks); shown only in this answer' }),
  })
  .meta({ id: 'WebhookCreated' });

export const webhookDelivery = z
  .object({
    event_id: z.string().meta({ description: 'The event delivered (its webhook-id header)' }),
    attempt: integer.meta({ description: 'The attempt of this event, from 1' }),
    status_code: integer.nullable().meta({ description: 'The receiver\'s HTTP status (null: no answer — a network error, a timeout or a refused address)' }),
    error: z.string().nullable().meta({ description: 'Why the attempt failed (null on a 2xx)' }),
    duration_ms: integer,
    delivered_at: timestamp.meta({ description: 'When the attempt ended' }),
  })
  .meta({ id: 'WebhookDelivery' });

/** What a webhook receives: the body of each delivery. */
export const webhookPayload = z
  .object({
    type: z.enum(deliverableTypes as [EventType, ...EventType[]]).meta({ description: 'The event type (DESIGN.md\'s catalog)' }),
    timestamp: timestamp.meta({ description: 'When the event occurred (its occurred_at)' }),
    data: z.record(z.string(), z.unknown()).meta({ description: 'The event\'s data, as the catalog defines it (institution_id and occurred_at included)' }),
  })
  .meta({ id: 'WebhookPayload' });
