/**
 * The sites decider, given / when / then: given the registry's past events,
 * when a command comes, then these events (and this answer) or this
 * rejection. Pure: no store, no server.
 */
import t from 'tap';
import type { DomainEvent } from '../src/events/catalog.js';
import { decide, type Decision, emptyRegistry, evolve, type SitesCommand } from '../src/commands/sites.js';

const INSTITUTION = '00000000-0000-4000-8000-0000000000aa';
const NOW = '2026-11-23T10:00:00Z';
const SITE_A = '00000000-0000-4000-8000-00000000000a';
const SITE_B = '00000000-0000-4000-8000-00000000000b';
const USER_1 = '00000000-0000-4000-8000-000000000001';
const USER_2 = '00000000-0000-4000-8000-000000000002';
const base = { institution_id: INSTITUTION, occurred_at: '2026-11-01T09:00:00Z' };

const siteCreated = (site_id: string, title: string): DomainEvent => ({ type: 'SiteCreated', data: { ...base, site_id, title } });
const assigned = (site_id: string, user_id: string): DomainEvent => ({ type: 'UserAssignedToSite', data: { ...base, site_id, user_id } });

function given(events: DomainEvent[]) {
  const state = emptyRegistry();
  for (const e of events) evolve(state, e);
  return { when: (command: SitesCommand): Decision => decide(state, command) };
}

const bulk = (titles: string[], extra: Partial<SitesCommand> = {}): SitesCommand => ({
  kind: 'bulk-create',
  institution_id: INSTITUTION,
  occurred_at: NOW,
  sites: titles.map((title) => ({ title })),
  new_ids: titles.map((_, i) => `00000000-0000-4000-8000-00000000010${i}`),
  ...extra,
}) as SitesCommand;

const membership = (kind: 'assign' | 'unassign', site_ids: string[], user_ids: string[], extra: Partial<SitesCommand> = {}): SitesCommand =>
  ({ kind, institution_id: INSTITUTION, occurred_at: NOW, site_ids, user_ids, known_users: new Set([USER_1, USER_2]), ...extra }) as SitesCommand;

t.test('bulk-create: given no sites, when two titles, then two SiteCreated and 201 with both', async (t) => {
  const decision = given([]).when(bulk([' North ', 'South']));
  if (decision.outcome !== 'accepted') return t.fail(JSON.stringify(decision));
  t.same(decision.events.map((e) => [e.type, (e.data as { title: string }).title]), [['SiteCreated', 'North'], ['SiteCreated', 'South']], 'titles trimmed');
  t.equal(decision.status, 201);
  t.match(decision.response, { count: 2, results: [{ title: 'North', users_count: 0, created_at: NOW }, { title: 'South' }] });
});

t.test('bulk-create: given a site, when the same title in other case and spacing, then rejected naming it', async (t) => {
  const decision = given([siteCreated(SITE_A, 'North Pantry')]).when(bulk(['Fresh', '  north PANTRY ']));
  t.same(decision, { outcome: 'rejected', status: 400, detail: 'sites.1.title: a site titled "north PANTRY" already exists.' });
});

t.test('bulk-create: when a title twice in the body, then rejected and nothing created', async (t) => {
  const decision = given([]).when(bulk(['One', 'Two', 'one']));
  t.same(decision, { outcome: 'rejected', status: 400, detail: 'sites.2.title: "one" appears twice in the request (also sites.0.title).' });
});

t.test('bulk-create: when a blank title, then rejected', async (t) => {
  t.match(given([]).when(bulk(['  '])), { outcome: 'rejected', status: 400, detail: /sites\.0\.title/ });
});

t.test('assign: given one pair assigned, when assigning it and a new one, then one event, assigned 1 already 1', async (t) => {
  const decision = given([siteCreated(SITE_A, 'A'), assigned(SITE_A, USER_1)]).when(membership('assign', [SITE_A], [USER_1, USER_2]));
  if (decision.outcome !== 'accepted') return t.fail(JSON.stringify(decision));
  t.same(decision.events, [{ type: 'UserAssignedToSite', data: { institution_id: INSTITUTION, occurred_at: NOW, site_id: SITE_A, user_id: USER_2 } }]);
  t.same(decision.response, { assigned: 1, already_assigned: 1 });
});

t.test('assign: when a pair appears twice in the request, then it counts once', async (t) => {
  const decision = given([siteCreated(SITE_A, 'A')]).when(membership('assign', [SITE_A, SITE_A], [USER_1]));
  t.match(decision, { outcome: 'accepted', response: { assigned: 1, already_assigned: 0 } });
});

t.test('unassign: given an assignment, then one UserUnassignedFromSite; not assigned pairs are counted', async (t) => {
  const decision = given([siteCreated(SITE_A, 'A'), siteCreated(SITE_B, 'B'), assigned(SITE_A, USER_1)]).when(
    membership('unassign', [SITE_A, SITE_B], [USER_1]),
  );
  if (decision.outcome !== 'accepted') return t.fail(JSON.stringify(decision));
  t.same(decision.events.map((e) => e.type), ['UserUnassignedFromSite']);
  t.same(decision.response, { unassigned: 1, not_assigned: 1 });
});

t.test('assign: an unknown site or profile is rejected naming it, and nothing is applied', async (t) => {
  const registry = given([siteCreated(SITE_A, 'A')]);
  t.same(registry.when(membership('assign', [SITE_A, SITE_B], [USER_1])), {
    outcome: 'rejected',
    status: 400,
    detail: `site_ids.1: no site ${SITE_B} in this institution.`,
  });
  t.same(registry.when(membership('assign', [SITE_A], [USER_1, USER_2], { known_users: new Set([USER_1]) } as Partial<SitesCommand>)), {
    outcome: 'rejected',
    status: 400,
    detail: `user_ids.1: no profile ${USER_2} in this institution.`,
  });
});

t.test('assign: given everything already assigned, then nothing to append', async (t) => {
  const decision = given([siteCreated(SITE_A, 'A'), assigned(SITE_A, USER_1)]).when(membership('assign', [SITE_A], [USER_1]));
  t.match(decision, { outcome: 'accepted', events: [], response: { assigned: 0, already_assigned: 1 } });
});

t.test('Idempotency-Key: the first request records its answer; a retry replays it; another body is refused', async (t) => {
  const key = { key: 'req-1', sha256: 'a'.repeat(64) };
  const first = given([]).when(bulk(['North'], { idempotency: key }));
  if (first.outcome !== 'accepted') return t.fail(JSON.stringify(first));
  const handled = first.events.at(-1)!;
  t.equal(handled.type, 'SiteRequestHandled', 'the answer is appended with the events');
  t.match(handled.data, { idempotency_key: 'req-1', request_sha256: key.sha256, status: 201, response: first.response });

  const after = given([...first.events]);
  t.same(after.when(bulk(['North'], { idempotency: key })), { outcome: 'replayed', status: 201, response: first.response }, 'same key and body: the first answer, nothing appended');
  t.same(after.when(bulk(['Other'], { idempotency: { key: 'req-1', sha256: 'b'.repeat(64) } })), {
    outcome: 'rejected',
    status: 422,
    detail: 'Idempotency-Key "req-1" was used with a different request.',
  });
  t.match(after.when(bulk(['North'], { idempotency: { key: 'req-2', sha256: key.sha256 } })), { outcome: 'rejected', status: 400 }, 'a new key is a new request');
});
