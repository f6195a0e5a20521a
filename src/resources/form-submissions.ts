/** Form submissions: declaration, search parameters (incl. question and answer together) and JSON. */
import type { FormSubmissionRecord } from '../../projections/records.js';
import { byCreatedAt, syncOrderings, updatedAtParam } from './created-order.js';
import type { ResourceDef } from '../query/resource.js';
import { json, type JsonView, str, ts } from './json.js';
import { profiles } from './profiles.js';
import { plainOpportunityJson } from './reservations.js';
import { userSummaryJson } from './users.js';

type Question = FormSubmissionRecord['questions'][number];

function questionJson(q: Question): string {
  const { id, title, question_type, options, allocation_input_type, allocation_total, allocation_decimal_places } = q.question;
  const question =
    `{"id":${str(id)},"title":${str(title)},"question_type":${json(question_type)},"options":${json(options ?? [])}` +
    (allocation_input_type === undefined ? '' : `,"allocation_input_type":${allocation_input_type}`) +
    (allocation_total === undefined ? '' : `,"allocation_total":${str(allocation_total)}`) +
    (allocation_decimal_places === undefined ? '' : `,"allocation_decimal_places":${allocation_decimal_places}`) +
    '}';
  const answer = q.answer ?? '';
  const selected = q.options ?? [];
  return (
    `{"id":${str(q.id)},"question":${question},"answer":${str(answer)},"options":${json(selected)}` +
    (q.date === undefined ? '' : `,"date":${json(q.date)}`) +
    `,"responded":${q.responded ?? (answer !== '' || selected.length > 0)}` +
    (q.allocation_values === undefined ? '' : `,"allocation_values":${json(q.allocation_values)}`) +
    (q.auto_populated_lists === undefined ? '' : `,"auto_populated_lists":${json(q.auto_populated_lists)}`) +
    '}'
  );
}

const titled = (record: { id: string; title: string } | undefined) =>
  record ? `{"id":${str(record.id)},"title":${str(record.title)}}` : undefined;

function submissionJson(s: FormSubmissionRecord, view: JsonView): string {
  const sites = s.site_ids.flatMap((id) => titled(view.get('site', id)) ?? []);
  const categories = s.category_ids.flatMap((id) => titled(view.get('category', id)) ?? []);
  const arrival = s.arrival_source_opportunity_id === null ? undefined : view.get('opportunity', s.arrival_source_opportunity_id);
  const opportunities = s.opportunities.flatMap((o) => {
    const opportunity = view.get('opportunity', o.opportunity_id);
    return opportunity
      ? [`{"opportunity":${plainOpportunityJson(opportunity, view)},"opportunity_shifts_count":${o.opportunity_shifts_count}}`]
      : [];
  });
  const consent = s.digital_consent.map(
    (c) => `{"id":${str(c.id)},"digital_consent_info":${json(c.digital_consent_info)},"consent_status":${c.consent_status}}`,
  );
  const attachments = s.attachments.map(
    (a) =>
      `{"id":${str(a.id)},"document_file":${json(a.document_file)},"notes":${str(a.notes ?? '')},` +
      `"attachment_info":${json(a.attachment_info)}}`,
  );
  return (
    `{"id":${str(s.id)},"user":${userSummaryJson(view.get('profile', s.user_id), view)},` +
    `"submission_status":${str(s.submission_status)},"created_at":${ts(s.created_at)},` +
    `"sites":[${sites.join(',')}],"categories":[${categories.join(',')}],` +
    `"arrival_source":${arrival ? plainOpportunityJson(arrival, view) : 'null'},` +
    `"questions":[${s.questions.map(questionJson).join(',')}],"medical_info":${json(s.medical_info)},` +
    `"emergency_contact":${json(s.emergency_contact)},"digital_consent":[${consent.join(',')}],` +
    `"general_availability":${json(s.general_availability)},"attachments":[${attachments.join(',')}],` +
    `"opportunities":[${opportunities.join(',')}],"folder":${json(s.folder)},"form":${json(s.form)}}`
  );
}

const same = (a: string | undefined, wanted: string | undefined) => wanted === undefined || a?.toLowerCase() === wanted;

export const formSubmissions: ResourceDef<'formsubmission'> = {
  kind: 'formsubmission',
  path: 'form-submissions',
  endpoints: { search: true, retrieve: true, filteredList: false },
  ...byCreatedAt,
  orderings: syncOrderings,
  symbols: {
    user: (s) => s.user_id,
    form_id: (s) => s.form.id.toLowerCase(),
    form_title: (s) => s.form.title.toLowerCase(),
    folder: (s) => s.folder.name.toLowerCase(),
  },
  params: [
    { name: 'id', type: 'uuid', primaryKey: true },
    { name: 'created_at', type: 'timestamp', range: true, column: 'created' },
    { name: 'question.id', type: 'text', value: (s) => s.questions.map((q) => q.question.id), group: 'question' },
    {
      name: 'question.answer',
      aliases: ['answer'],
      type: 'text',
      value: (s) => s.questions.map((q) => q.answer ?? ''),
      group: 'question',
    },
    { name: 'user.id', type: 'uuid', symbol: 'user' },
    // Through the submission's profile, as it is now.
    { name: 'user.first_name', type: 'text', through: { symbol: 'user', table: () => profiles, param: 'first_name' } },
    { name: 'user.last_name', type: 'text', through: { symbol: 'user', table: () => profiles, param: 'last_name' } },
    { name: 'user.email', type: 'text', through: { symbol: 'user', table: () => profiles, param: 'email' } },
    { name: 'form.id', type: 'text', symbol: 'form_id' },
    { name: 'form.title', type: 'text', symbol: 'form_title' },
    { name: 'folder.name', type: 'text', symbol: 'folder' },
    updatedAtParam,
  ],
  groups: {
    // Both given: the same question must have that id and that answer.
    question: (s, wanted) =>
      s.questions.some(
        (q) => same(q.question.id, wanted.get('question.id')) && same(q.answer ?? '', wanted.get('question.answer')),
      ),
  },
  json: submissionJson,
  nests: ['profile', 'site', 'category', 'opportunity'],
};
