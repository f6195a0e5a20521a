/**
 * Profiles (registered and offline), with their tags, custom field
 * answers, opportunities joined, and logged_hours / completed_shifts kept
 * current from their reservations. And the custom field definitions the
 * answers refer to.
 */
import type { EventData } from '../src/events/catalog.js';
import { parseDate } from '../src/time.js';
import { put, type Change, type Projection, type ReadView } from './projection.js';
import type { ProfileRecord } from './records.js';

/** Fields of profile events that are not profile fields. */
const NOT_FIELDS = new Set(['institution_id', 'occurred_at', 'profile_id']);

/** The profile fields an event sets, as the record keeps them; absent fields are left out. */
function fieldsOf(d: EventData<'ProfileCreated'> | EventData<'ProfileUpdated'>): Partial<ProfileRecord> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(d)) {
    if (value === undefined || NOT_FIELDS.has(key)) continue;
    out[key] = key === 'date_of_birth' ? (value === null ? null : (parseDate(value as string) ?? null)) : value;
  }
  return out as Partial<ProfileRecord>;
}

/** A profile with every field at its default (DESIGN.md: omitted strings "", nullable fields null, lists []). */
export function blankProfile(id: string, institution_id: string, at: number): ProfileRecord {
  return {
    id,
    institution_id,
    is_offline: false,
    first_name: '',
    last_name: '',
    email: '',
    phone_number: '',
    date_of_birth: null,
    gender: null,
    gender_text: '',
    occupation: null,
    occupation_institution_name: '',
    address: '',
    latitude_longitude: null,
    timezone: '',
    profile_image: '',
    is_following: false,
    emergency_contact: null,
    medical_information: null,
    skills: [],
    languages: [],
    tags: [],
    custom_fields: [],
    opportunities: [],
    logged_hours: 0,
    completed_shifts: 0,
    created_at: at,
    updated_at: at,
  };
}

function change(view: ReadView, id: string, at: number, update: (p: ProfileRecord) => Partial<ProfileRecord>): Change[] {
  const profile = view.get('profile', id);
  return profile ? [put('profile', { ...profile, ...update(profile), updated_at: at })] : [];
}

/** The hours a reservation counts for its profile: only once they are logged. */
function hoursOf(view: ReadView, reservationId: string): { profile: string; hours: number; completed: number } | undefined {
  const reservation = view.get('reservation', reservationId);
  if (!reservation) return undefined;
  return {
    profile: reservation.user_id,
    hours: reservation.status === 6 ? reservation.logged_hours : 0,
    completed: reservation.status === 6 ? 1 : 0,
  };
}

export const profiles: Projection = {
  name: 'profiles',
  ProfileCreated: (_view, d, at) => [put('profile', { ...blankProfile(d.profile_id, d.institution_id, at), ...fieldsOf(d) })],
  ProfileUpdated: (view, d, at) => change(view, d.profile_id, at, () => fieldsOf(d)),
  ProfileTagged: (view, d, at) =>
    change(view, d.profile_id, at, (p) => ({
      tags: [...p.tags.filter((t) => t.id !== d.profile_tag_id), { id: d.profile_tag_id, tag: d.tag }],
    })),
  ProfileUntagged: (view, d, at) =>
    change(view, d.profile_id, at, (p) => ({ tags: p.tags.filter((t) => t.id !== d.profile_tag_id) })),
  ProfileCustomFieldAnswered: (view, d, at) =>
    change(view, d.profile_id, at, (p) => {
      // One answer per field: a new answer replaces the previous one.
      const previous = p.custom_fields.find((e) => e.id === d.entry_id || e.custom_field_id === d.custom_field_id);
      const entry = {
        id: d.entry_id,
        custom_field_id: d.custom_field_id,
        created_at: previous?.created_at ?? at,
        value: d.value ?? null,
        selections: d.selections ?? null,
      };
      return { custom_fields: [...p.custom_fields.filter((e) => e !== previous), entry] };
    }),
  ProfileOpportunityAdded: (view, d, at) =>
    change(view, d.profile_id, at, (p) =>
      p.opportunities.some((o) => o.id === d.entry_id || o.opportunity_id === d.opportunity_id)
        ? {}
        : { opportunities: [...p.opportunities, { id: d.entry_id, opportunity_id: d.opportunity_id }] },
    ),
  HoursLogged: (view, d, at) => {
    const before = hoursOf(view, d.reservation_id);
    if (!before) return [];
    return change(view, before.profile, at, (p) => ({
      logged_hours: p.logged_hours - before.hours + d.logged_hours,
      completed_shifts: p.completed_shifts - before.completed + 1,
    }));
  },
  ReservationCancelled: (view, d, at) => {
    const before = hoursOf(view, d.reservation_id);
    if (!before || before.completed === 0) return [];
    return change(view, before.profile, at, (p) => ({
      logged_hours: p.logged_hours - before.hours,
      completed_shifts: p.completed_shifts - before.completed,
    }));
  },
};

export const customFields: Projection = {
  name: 'custom fields',
  CustomFieldDefined: (_view, d, at) => [
    put('customfield', {
      id: d.custom_field_id,
      institution_id: d.institution_id,
      name: d.name,
      field_type: d.field_type,
      is_active: d.is_active,
      options: d.options,
      created_at: at,
      updated_at: at,
    }),
  ],
  CustomFieldUpdated: (view, d, at) => {
    const field = view.get('customfield', d.custom_field_id);
    if (!field) return [];
    return [
      put('customfield', {
        ...field,
        name: d.name ?? field.name,
        field_type: d.field_type ?? field.field_type,
        is_active: d.is_active ?? field.is_active,
        options: d.options ?? field.options,
        updated_at: at,
      }),
    ];
  },
};
