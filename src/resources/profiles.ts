/** Profiles: declaration, search parameters and JSON (custom fields, tags, opportunities, age). */
import type { ReadView } from '../../projections/projection.js';
import type { CustomFieldAnswer, ProfileRecord } from '../../projections/records.js';
import { byCreatedAt, syncOrderings, updatedAtParam } from './created-order.js';
import type { ResourceDef } from '../query/resource.js';
import { ageOn } from '../time.js';
import { date, json, type JsonView, str, ts } from './json.js';

function customFieldEntryJson(entry: CustomFieldAnswer, view: ReadView): string | undefined {
  const field = view.get('customfield', entry.custom_field_id);
  if (!field) return undefined;
  const definition =
    `{"id":${str(field.id)},"name":${str(field.name)},"field_type":${field.field_type},"is_active":${field.is_active}` +
    (field.options === undefined ? '}' : `,"options":${json(field.options)}}`);
  let value: string;
  if (entry.selections !== null) {
    const chosen = entry.selections.flatMap((s) => {
      const option = field.options?.find((o) => o.id === s.option_id);
      return option ? [`{"id":${str(s.id)},"value":${json(option)}}`] : [];
    });
    value = `[${chosen.join(',')}]`;
  } else if (entry.value !== null) {
    const { id, value: v, value_info } = entry.value;
    value = `{"id":${str(id)},"value":${json(v)}${value_info === undefined ? '' : `,"value_info":${json(value_info)}`}}`;
  } else {
    value = 'null';
  }
  return `{"id":${str(entry.id)},"custom_field":${definition},"created_at":${ts(entry.created_at)},"custom_field_value":${value}}`;
}

function opportunityEntryJson(entry: ProfileRecord['opportunities'][number], view: ReadView): string | undefined {
  const opportunity = view.get('opportunity', entry.opportunity_id);
  if (!opportunity) return undefined;
  const category = view.get('category', opportunity.category_id);
  return (
    `{"id":${str(entry.id)},"opportunity":{"id":${str(opportunity.id)},"title":${str(opportunity.title)},` +
    `"category":${category ? `{"title":${str(category.title)}}` : 'null'}}}`
  );
}

const list = <T>(items: readonly T[], each: (item: T) => string | undefined) =>
  `[${items.flatMap((item) => each(item) ?? []).join(',')}]`;

/** A profile; `paginated` adds address_coordinates and created_at to profile_details, as list and search results show them. */
function profileJson(p: ProfileRecord, view: JsonView, paginated: boolean): string {
  const details =
    `{"first_name":${str(p.first_name)},"last_name":${str(p.last_name)},` +
    `"full_name":${str(`${p.first_name} ${p.last_name}`.trim())},"email":${str(p.email)},` +
    `"profile_image":${str(p.profile_image)},"phone_number":${str(p.phone_number)},` +
    `"date_of_birth":${date(p.date_of_birth)},"gender":${json(p.gender)},"gender_text":${str(p.gender_text)},` +
    `"occupation":${json(p.occupation)},"occupation_institution_name":${str(p.occupation_institution_name)},` +
    `"skills":${json(p.skills)},"languages":${json(p.languages)},"address":${str(p.address)},` +
    `"latitude_longitude":${json(p.latitude_longitude)},` +
    (paginated ? `"address_coordinates":${json(p.latitude_longitude ?? [])},"created_at":${ts(p.created_at)},` : '') +
    `"age":${p.date_of_birth === null ? 'null' : ageOn(p.date_of_birth, view.today())}}`;
  return (
    `{"id":${str(p.id)},"logged_hours":${p.logged_hours},"is_offline":${p.is_offline},"is_following":${p.is_following},` +
    `"emergency_contact":${json(p.emergency_contact)},"medical_information":${json(p.medical_information)},` +
    `"profile_details":${details},"opportunities":${list(p.opportunities, (o) => opportunityEntryJson(o, view))},` +
    `"most_recent_shift":null,"completed_shifts":${p.completed_shifts},"profile_tags":${json(p.tags)},` +
    `"custom_fields":${list(p.custom_fields, (e) => customFieldEntryJson(e, view))}}`
  );
}

export const profiles: ResourceDef<'profile'> = {
  kind: 'profile',
  path: 'profiles',
  endpoints: { search: true, retrieve: true, filteredList: false },
  ...byCreatedAt,
  orderings: syncOrderings,
  columns: { ...byCreatedAt.columns, offline: (p) => (p.is_offline ? 1 : 0) },
  symbols: {
    first_name: (p) => p.first_name.toLowerCase(),
    last_name: (p) => p.last_name.toLowerCase(),
    email: (p) => p.email.toLowerCase(),
    phone_number: (p) => p.phone_number.toLowerCase(),
  },
  params: [
    { name: 'id', type: 'uuid', primaryKey: true },
    { name: 'first_name', type: 'text', symbol: 'first_name' },
    { name: 'last_name', type: 'text', symbol: 'last_name' },
    { name: 'email', type: 'text', symbol: 'email' },
    { name: 'phone_number', type: 'text', symbol: 'phone_number' },
    { name: 'is_offline', type: 'boolean', column: 'offline' },
    { name: 'created_at', type: 'timestamp', range: true, column: 'created' },
    { name: 'created_date', type: 'date', range: true, column: 'created' },
    { name: 'tag', type: 'text', value: (p) => p.tags.map((t) => t.tag.tag_title) },
    updatedAtParam,
  ],
  json: (p, view) => profileJson(p, view, true),
  retrieveJson: (p, view) => profileJson(p, view, false),
  nests: ['opportunity', 'category', 'customfield'],
  volatile: (view) => view.today(),
};
