/** The snapshot cases' placeholders, filled with ids from the data an app serves. */
import { DEMO_KEY, HARBOR_KEY, type TestApp } from '../helpers.js';
import { placeholders, type SnapshotCase } from './cases.js';

/** Fill the placeholders with ids from the data: the 5th shift, its opportunity and category, a profile with custom fields, a reservation with hours and its category. */
export async function resolver(app: TestApp): Promise<(url: string) => string> {
  const { body } = await app.get('/api/shifts/?limit=5');
  const shift = body.results[4];
  const profiles = (await app.get('/api/profiles/?limit=100')).body.results as Array<{ id: string; custom_fields: unknown[] }>;
  const profile = profiles.find((p) => p.custom_fields.length > 0)!;
  const reservations = (await app.get('/api/reservations/?limit=100')).body.results as Array<{ id: string; status: number; opportunity: { category: { id: string } } }>;
  const reservation = reservations.find((r) => r.status === 6)!;
  const first = async (path: string) => (await app.get(`/api/${path}/?limit=1`)).body.results[0] as { id: string };
  const submission = await first('form-submissions');
  const sequence = await first('sequences');
  const site = await first('sites');
  const userSequence = (await app.get('/api/user-sequences/?limit=1')).body.results[0] as { user_info: { id: string; last_name: string } };
  return (url) =>
    url
      .replaceAll(placeholders.SHIFT, shift.id)
      .replaceAll(placeholders.OPPORTUNITY, shift.opportunity.id)
      .replaceAll(placeholders.CATEGORY, shift.opportunity.category.id)
      .replaceAll(placeholders.PROFILE, profile.id)
      .replaceAll(placeholders.RESERVATION, reservation.id)
      .replaceAll(placeholders.RESERVED_CATEGORY, reservation.opportunity.category.id)
      .replaceAll(placeholders.SUBMISSION, submission.id)
      .replaceAll(placeholders.SEQUENCE, sequence.id)
      .replaceAll(placeholders.SITE, site.id)
      .replaceAll(placeholders.USER, userSequence.user_info.id);
}


const keys = { riverside: DEMO_KEY, harbor: HARBOR_KEY, none: null } as const;

export interface Answer {
  name: string;
  url: string;
  status: number;
  body: unknown;
}

export async function answers(app: TestApp, cases: readonly SnapshotCase[]): Promise<Answer[]> {
  const resolve = await resolver(app);
  const out: Answer[] = [];
  for (const c of cases) {
    const url = resolve(c.url);
    const res = await app.get(url, keys[c.as ?? 'riverside']);
    out.push({ name: c.name, url, status: res.status, body: res.body });
  }
  return out;
}

