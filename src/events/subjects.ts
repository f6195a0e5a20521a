/**
 * What each event of the catalog is about, as the change feed names it: a
 * resource by its path name and the field of the event holding the
 * record's id. Keys, the record of an idempotent request and the webhooks' own
 * events are about no record a client reads (they are not in the feed).
 */
import type { EventOf, EventType } from './catalog.js';

/** The resources the change feed names (the API's path names; institutions and custom fields have no route of their own). */
export const feedResources = [
  'institutions',
  'categories',
  'opportunities',
  'shifts',
  'profiles',
  'custom-fields',
  'reservations',
  'form-submissions',
  'sequences',
  'user-sequences',
  'sites',
] as const;
export type FeedResource = (typeof feedResources)[number];

/** The fields of an event type's data that hold an id. */
type IdField<T extends EventType> = Extract<keyof EventOf<T>['data'], `${string}_id`>;

type Subjects = { readonly [T in EventType]: readonly [FeedResource, IdField<T>] | null };

const subjects: Subjects = {
  InstitutionRegistered: ['institutions', 'institution_id'],
  InstitutionUpdated: ['institutions', 'institution_id'],
  ApiKeyIssued: null,
  ApiKeyRevoked: null,
  CategoryCreated: ['categories', 'category_id'],
  CategoryUpdated: ['categories', 'category_id'],
  OpportunityCreated: ['opportunities', 'opportunity_id'],
  OpportunityUpdated: ['opportunities', 'opportunity_id'],
  OpportunityStatusChanged: ['opportunities', 'opportunity_id'],
  ShiftCreated: ['shifts', 'shift_id'],
  ShiftUpdated: ['shifts', 'shift_id'],
  ShiftRemoved: ['shifts', 'shift_id'],
  ProfileCreated: ['profiles', 'profile_id'],
  ProfileUpdated: ['profiles', 'profile_id'],
  ProfileTagged: ['profiles', 'profile_id'],
  ProfileUntagged: ['profiles', 'profile_id'],
  CustomFieldDefined: ['custom-fields', 'custom_field_id'],
  CustomFieldUpdated: ['custom-fields', 'custom_field_id'],
  ProfileCustomFieldAnswered: ['profiles', 'profile_id'],
  ProfileOpportunityAdded: ['profiles', 'profile_id'],
  ReservationCreated: ['reservations', 'reservation_id'],
  HoursLogged: ['reservations', 'reservation_id'],
  ReservationCancelled: ['reservations', 'reservation_id'],
  FormSubmitted: ['form-submissions', 'submission_id'],
  FormSubmissionStatusChanged: ['form-submissions', 'submission_id'],
  SequenceCreated: ['sequences', 'sequence_id'],
  SequenceUpdated: ['sequences', 'sequence_id'],
  SequenceStepAdded: ['sequences', 'sequence_id'],
  SequenceStepRemoved: ['sequences', 'sequence_id'],
  UserSequenceStarted: ['user-sequences', 'user_sequence_id'],
  UserSequenceStatusChanged: ['user-sequences', 'user_sequence_id'],
  UserSequenceStepUpdated: ['user-sequences', 'user_sequence_id'],
  SiteCreated: ['sites', 'site_id'],
  UserAssignedToSite: ['sites', 'site_id'],
  UserUnassignedFromSite: ['sites', 'site_id'],
  SiteRequestHandled: null,
  WebhookSubscribed: null,
  WebhookUnsubscribed: null,
  WebhookPaused: null,
  WebhookResumed: null,
  WebhookAttempted: null,
};

/** The resource events of this type are about (undefined: none). */
export function resourceOfType(type: EventType): FeedResource | undefined {
  return subjects[type]?.[0];
}

/** The id of the record an event of this type is about, if it is about one a client reads. */
export function subjectIdOf(type: EventType, data: object): string | undefined {
  const subject = subjects[type];
  return subject === null ? undefined : ((data as Record<string, unknown>)[subject[1]] as string);
}
