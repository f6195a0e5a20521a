/** Sequences and user sequences: declarations, search parameters and JSON. */
import type { SequenceRecord, UserSequenceRecord } from '../../projections/records.js';
import { byCreatedAt, syncOrderings, updatedAtParam } from './created-order.js';
import type { ResourceDef } from '../query/resource.js';
import { json, type JsonView, str, ts } from './json.js';
import { profiles } from './profiles.js';
import { userSummaryJson } from './users.js';

function sequenceJson(s: SequenceRecord): string {
  return (
    `{"id":${str(s.id)},"created_at":${ts(s.created_at)},"updated_at":${ts(s.updated_at)},` +
    `"title":${str(s.title)},"description":${str(s.description)},"folder":${json(s.folder)},` +
    `"status":${str(s.status)},"display_status":${str(s.display_status)},` +
    `"number_users_active":${s.users.Active},"number_users_paused":${s.users.Paused},` +
    `"number_users_inactive":${s.users.Inactive},"number_users_finished":${s.users.Finished},` +
    `"number_active_steps":${s.steps.length},"step_info":${json(s.steps)}}`
  );
}

export const sequences: ResourceDef<'sequence'> = {
  kind: 'sequence',
  path: 'sequences',
  endpoints: { search: true, retrieve: true, filteredList: false },
  ...byCreatedAt,
  symbols: {
    title: (s) => s.title.toLowerCase(),
    description: (s) => s.description.toLowerCase(),
    status: (s) => s.status.toLowerCase(),
    display_status: (s) => s.display_status.toLowerCase(),
  },
  params: [
    { name: 'id', type: 'uuid', primaryKey: true },
    { name: 'title', type: 'text', symbol: 'title' },
    { name: 'description', type: 'text', symbol: 'description' },
    { name: 'status', type: 'text', symbol: 'status' },
    { name: 'display_status', type: 'text', symbol: 'display_status' },
    { name: 'created_at', type: 'timestamp', range: true, column: 'created' },
    { name: 'created_date', type: 'date', range: true, column: 'created' },
    updatedAtParam,
  ],
  orderings: syncOrderings,
  json: sequenceJson,
  nests: [],
};

function userSequenceJson(u: UserSequenceRecord, view: JsonView): string {
  const sequence = view.get('sequence', u.sequence_id);
  const steps = (sequence?.steps ?? []).map((step) => {
    const details = step.step_details.map((detail) => {
      const progress = u.progress[detail.id];
      return (
        `{"title":${str(detail.title)},"description":${str(detail.description)},"user_sequence_info":` +
        `{"id":${str(detail.id)},"status":${progress?.status ?? 0},"completion_date":${ts(progress?.completion_date ?? null)},` +
        `"expiration_date":${ts(progress?.expiration_date ?? null)},"attachment_added":null}}`
      );
    });
    return `{"step":${step.step},"type":${step.type},"step_details":[${details.join(',')}]}`;
  });
  const info = sequence
    ? `{"id":${str(sequence.id)},"title":${str(sequence.title)},"description":${str(sequence.description)},` +
      `"sequence_status":${str(sequence.status)},"display_status":${str(sequence.display_status)},"step_info":[${steps.join(',')}]}`
    : 'null';
  return (
    `{"id":${str(u.id)},"user_info":${userSummaryJson(view.get('profile', u.user_id), view)},"sequence_info":${info},` +
    `"status":${str(u.status)},"created_at":${ts(u.created_at)},"updated_at":${ts(u.updated_at)}}`
  );
}

export const userSequences: ResourceDef<'usersequence'> = {
  kind: 'usersequence',
  path: 'user-sequences',
  endpoints: { search: true, retrieve: false, filteredList: false },
  ...byCreatedAt,
  orderings: syncOrderings,
  symbols: { user: (u) => u.user_id },
  params: [
    { name: 'id', type: 'uuid', primaryKey: true },
    { name: 'created_at', type: 'timestamp', range: true, column: 'created' },
    { name: 'user.id', type: 'uuid', symbol: 'user' },
    // Through the user sequence's profile, as it is now.
    { name: 'user.first_name', type: 'text', through: { symbol: 'user', table: () => profiles, param: 'first_name' } },
    { name: 'user.last_name', type: 'text', through: { symbol: 'user', table: () => profiles, param: 'last_name' } },
    { name: 'user.email', type: 'text', through: { symbol: 'user', table: () => profiles, param: 'email' } },
    updatedAtParam,
  ],
  json: userSequenceJson,
  nests: ['profile', 'sequence'],
};
