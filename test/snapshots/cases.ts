/**
 * The requests of the snapshot tests, by area. Each answer is kept in
 * test/snapshots/<area>.json; a changed answer fails until the snapshot is
 * updated on purpose with `npm run snapshots:update`.
 */
export interface SnapshotCase {
  name: string;
  url: string;
  /** Which demo organization's key to use (default riverside). */
  as?: 'riverside' | 'harbor' | 'none';
}

const SHIFT = '{shift}';
const OPPORTUNITY = '{opportunity}';
const CATEGORY = '{category}';
const PROFILE = '{profile}';
const RESERVATION = '{reservation}';
const SUBMISSION = '{submission}';
const SEQUENCE = '{sequence}';
const SITE = '{site}';
/** The category of the reservation's opportunity. */
const RESERVED_CATEGORY = '{reserved-category}';
/** The user of the first user sequence. */
const USER = '{user}';

/** Placeholders filled from the data so the cases read as intent, not ids. */
export const placeholders = { SHIFT, OPPORTUNITY, CATEGORY, PROFILE, RESERVATION, RESERVED_CATEGORY, SUBMISSION, SEQUENCE, SITE, USER };

export const areas: Record<string, SnapshotCase[]> = {
  shifts: [
    { name: 'list, first page', url: '/api/shifts/' },
    { name: 'list, page 3 of 25', url: '/api/shifts/?page=3&limit=25' },
    { name: 'retrieve', url: `/api/shifts/${SHIFT}/` },
    { name: 'search by date window', url: '/api/shifts/search/?shift_date.gte=2026-10-01&shift_date.lt=2026-10-08&limit=100' },
    { name: 'search by alias date, exact', url: '/api/shifts/search/?date=2026-09-03' },
    { name: 'search by start time of day', url: '/api/shifts/search/?start_time.gte=22:00&limit=5' },
    { name: 'search by end time, microsecond', url: '/api/shifts/search/?end_time.lt=03:00&end_time.gt=00:00' },
    { name: 'search by spots range, ordered -spots', url: '/api/shifts/search/?spots.gte=8&ordering=-spots&limit=20' },
    { name: 'search by timestamp with offset', url: '/api/shifts/search/?shift_start_at.gte=2026-09-10T08:00:00-02:00&shift_start_at.lte=2026-09-12' },
    { name: 'search by created date', url: '/api/shifts/search/?created_on=2026-08-03&ordering=-created_at&limit=5' },
    { name: 'search by title, case-insensitive', url: '/api/shifts/search/?shift_title=NIGHT+inventory&ordering=shift_end_at' },
    { name: 'search by null description', url: '/api/shifts/search/?description=Training+provided+on+site.&limit=3' },
    { name: 'search by opportunity and category', url: `/api/shifts/search/?opportunity_id=${OPPORTUNITY}&category.id=${CATEGORY}&limit=5` },
    { name: 'search by category title', url: '/api/shifts/search/?category_title=warehouse&ordering=-shift_start_at&limit=5' },
    { name: 'search by opportunity title', url: '/api/shifts/search/?opportunity.title=Pantry+Helper+(weekdays)&limit=3' },
    { name: 'search ordering created_at, deep page', url: '/api/shifts/search/?ordering=created_at&page=14&limit=10' },
    { name: 'search, invalid date', url: '/api/shifts/search/?date.gte=2026-02-30' },
    { name: 'search, invalid ordering', url: '/api/shifts/search/?ordering=-title' },
    { name: 'retrieve as another institution', url: `/api/shifts/${SHIFT}/`, as: 'harbor' },
    { name: 'list without key', url: '/api/shifts/', as: 'none' },
    { name: 'harbor list', url: '/api/shifts/?limit=3', as: 'harbor' },
    { name: 'sync: changed since a time, latest change first', url: '/api/shifts/search/?updated_at.gt=2026-01-01T00:00:00Z&ordering=-updated_at&limit=3' },
  ],
  opportunities: [
    { name: 'list', url: '/api/opportunities/' },
    { name: 'retrieve', url: `/api/opportunities/${OPPORTUNITY}/` },
    { name: 'search published, newest first', url: '/api/opportunities/search/?status=1&ordering=-created_at' },
    { name: 'search by category title', url: '/api/opportunities/search/?category.title=Community+Outreach' },
    { name: 'search by category id', url: `/api/opportunities/search/?category_id=${CATEGORY}` },
    { name: 'search by created_at range', url: '/api/opportunities/search/?created_at.gt=2026-08-03T10:00:00Z&created_at.lte=2026-08-03T11:00:00Z' },
    { name: 'search by title', url: '/api/opportunities/search/?title=forklift+operator' },
    { name: 'search, invalid status', url: '/api/opportunities/search/?status=5' },
  ],
  profiles: [
    { name: 'list', url: '/api/profiles/?limit=5' },
    { name: 'retrieve, with custom fields, tags and opportunities', url: `/api/profiles/${PROFILE}/` },
    { name: 'retrieve as another institution', url: `/api/profiles/${PROFILE}/`, as: 'harbor' },
    { name: 'search offline profiles', url: '/api/profiles/search/?is_offline=true' },
    { name: 'search by first name, case-insensitive', url: '/api/profiles/search/?first_name=ANA' },
    { name: 'search by tag', url: '/api/profiles/search/?tag=bilingual&limit=3' },
    { name: 'search by created date range', url: '/api/profiles/search/?created_date.gte=2026-08-03&created_at.lt=2026-08-03T13:00:00Z&limit=3' },
    { name: 'search, invalid boolean', url: '/api/profiles/search/?is_offline=maybe' },
    { name: 'harbor list', url: '/api/profiles/?limit=2', as: 'harbor' },
  ],
  reservations: [
    { name: 'list', url: '/api/reservations/?limit=5' },
    { name: 'retrieve, hours logged', url: `/api/reservations/${RESERVATION}/` },
    { name: 'retrieve as another institution', url: `/api/reservations/${RESERVATION}/`, as: 'harbor' },
    { name: 'deep page', url: '/api/reservations/?page=7&limit=10' },
    { name: 'search by shift date window, by shift start', url: '/api/reservations/search/?shift_date.gte=2026-09-01&shift_date.lt=2026-09-15&ordering=shift_start_at&limit=5' },
    { name: 'search by category, most hours first', url: `/api/reservations/search/?category.id=${RESERVED_CATEGORY}&ordering=-logged_hours&limit=5` },
    { name: 'search by logged hours, latest shift first', url: `/api/reservations/search/?logged_hours.gte=1.5&ordering=-shift_start_at&limit=3` },
    { name: 'search, invalid number', url: '/api/reservations/search/?logged_hours.lt=1,5' },
    { name: 'sync: list changed since a day, latest change first', url: '/api/reservations/?updated_at.gte=2026-01-01&ordering=-updated_at&limit=3' },
  ],
  'form-submissions': [
    { name: 'list', url: '/api/form-submissions/?limit=3' },
    { name: 'retrieve', url: `/api/form-submissions/${SUBMISSION}/` },
    { name: 'retrieve as another institution', url: `/api/form-submissions/${SUBMISSION}/`, as: 'harbor' },
    { name: 'search by question and answer (same question)', url: '/api/form-submissions/search/?question.id=q-why&question.answer=to+give+back' },
    { name: 'search by question and answer alias, no such pair', url: '/api/form-submissions/search/?question.id=q-shirt&answer=To+give+back' },
    { name: 'search by question only', url: '/api/form-submissions/search/?question.id=q-split&limit=2' },
    { name: 'search by form title and folder', url: '/api/form-submissions/search/?form.title=Volunteer+Intake+Form&folder.name=new+volunteers' },
    { name: 'search by user', url: `/api/form-submissions/search/?user.id=${USER}` },
    { name: 'search by user email', url: '/api/form-submissions/search/?user.email=ANA.ALVAREZ0@example.org' },
    { name: 'search by created_at range', url: '/api/form-submissions/search/?created_at.gte=2026-08-01&form.id=youth-waiver' },
  ],
  sequences: [
    { name: 'list', url: '/api/sequences/' },
    { name: 'retrieve', url: `/api/sequences/${SEQUENCE}/` },
    { name: 'retrieve as another institution', url: `/api/sequences/${SEQUENCE}/`, as: 'harbor' },
    { name: 'search by status, newest first', url: '/api/sequences/search/?status=published&ordering=-created_at' },
    { name: 'search by display status and created date', url: '/api/sequences/search/?display_status=Private&created_date.gte=2026-08-01' },
    { name: 'search by title', url: '/api/sequences/search/?title=Forklift+Certification+(2026)' },
  ],
  'user-sequences': [
    { name: 'list', url: '/api/user-sequences/?limit=2' },
    { name: 'search by user', url: `/api/user-sequences/search/?user.id=${USER}` },
    { name: 'search by last name and created_at range', url: '/api/user-sequences/search/?user.last_name=alvarez&created_at.gte=2026-08-01T00:00:00Z' },
    { name: 'harbor list', url: '/api/user-sequences/?limit=1', as: 'harbor' },
  ],
  sites: [
    { name: 'list', url: '/api/sites/' },
    { name: 'retrieve', url: `/api/sites/${SITE}/` },
    { name: 'retrieve as another institution', url: `/api/sites/${SITE}/`, as: 'harbor' },
    { name: 'list by title', url: '/api/sites/?title=main+warehouse' },
    { name: 'list by member', url: `/api/sites/?user.id=${USER}` },
    { name: 'sync: list changed since a day, by change', url: '/api/sites/?updated_at.gte=2026-01-01&ordering=updated_at&limit=3' },
  ],
  changes: [
    { name: 'from the beginning, 5', url: '/api/changes/?limit=5' },
    { name: 'after a cursor', url: '/api/changes/?after=MjAuMjA&limit=5' },
    { name: 'harbor, 3', url: '/api/changes/?limit=3', as: 'harbor' },
    { name: 'past the end', url: '/api/changes/?after=OTAwMDAwLjkwMDAwMA' },
    { name: 'invalid cursor', url: '/api/changes/?after=zzz' },
    { name: 'limit over 1000', url: '/api/changes/?limit=1001' },
  ],
};
