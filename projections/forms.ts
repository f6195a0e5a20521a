/** Form submissions, as submitted, with their status kept current. */
import { put, type Projection } from './projection.js';

export const formSubmissions: Projection = {
  name: 'form submissions',
  FormSubmitted: (_view, d, at) => [
    put('formsubmission', {
      id: d.submission_id,
      institution_id: d.institution_id,
      user_id: d.user_id,
      form: d.form,
      folder: d.folder,
      submission_status: d.submission_status ?? 'New',
      site_ids: d.site_ids ?? [],
      category_ids: d.category_ids ?? [],
      arrival_source_opportunity_id: d.arrival_source_opportunity_id ?? null,
      questions: d.questions ?? [],
      medical_info: d.medical_info ?? null,
      emergency_contact: d.emergency_contact ?? null,
      digital_consent: d.digital_consent ?? [],
      general_availability: d.general_availability ?? [],
      attachments: d.attachments ?? [],
      opportunities: d.opportunities ?? [],
      created_at: at,
      updated_at: at,
    }),
  ],
  FormSubmissionStatusChanged: (view, d, at) => {
    const submission = view.get('formsubmission', d.submission_id);
    return submission ? [put('formsubmission', { ...submission, submission_status: d.submission_status, updated_at: at })] : [];
  },
};
