/**
 * The sites registry of one institution as a decider: its state is a fold
 * of the registry stream, and each command is decided from that state
 * alone — new events and the response, or a rejection. No I/O here; the
 * command handler (handler.ts) loads the stream and appends.
 */
import type { DomainEvent, EventData } from '../events/catalog.js';
import { siteBody } from '../resources/sites.js';
import { ownCopy } from '../own-strings.js';
import { parseEventTimestamp } from '../time.js';

export interface RegistryState {
  /** The users assigned to each site, by site id. */
  readonly sites: Map<string, Set<string>>;
  /** Site ids by normalized title (trimmed, lower case). */
  readonly titles: Map<string, string>;
  /**
   * Requests made with an Idempotency-Key, by key, in the order they were made (`at`: microseconds), each with its
   * response as JSON text: a day's requests are kept, and an object decoded from the log would keep its event's whole
   * text with it (see own-strings.ts).
   */
  readonly requests: Map<string, { sha256: string; status: number; responseJson: string; at: number }>;
}

export const normalizeTitle = (title: string) => title.trim().toLowerCase();

export function emptyRegistry(): RegistryState {
  return { sites: new Map(), titles: new Map(), requests: new Map() };
}

/**
 * Fold one registry event into the state (mutating it: the state is private to one decision). What the state keeps
 * of an event is copied (`ownCopy`): events read from the log hold slices of their whole text.
 */
export function evolve(state: RegistryState, event: DomainEvent): RegistryState {
  switch (event.type) {
    case 'SiteCreated': {
      const d = event.data;
      const siteId = ownCopy(d.site_id);
      state.sites.set(siteId, new Set());
      state.titles.set(ownCopy(normalizeTitle(d.title)), siteId);
      break;
    }
    case 'UserAssignedToSite':
    case 'UserUnassignedFromSite': {
      const users = state.sites.get(event.data.site_id);
      if (!users) break;
      if (event.type === 'UserAssignedToSite') users.add(ownCopy(event.data.user_id));
      else users.delete(event.data.user_id);
      break;
    }
    case 'SiteRequestHandled': {
      const d = event.data;
      const request = { sha256: ownCopy(d.request_sha256), status: d.status, responseJson: JSON.stringify(d.response), at: parseEventTimestamp(d.occurred_at) ?? 0 };
      state.requests.set(ownCopy(d.idempotency_key), request);
      break;
    }
    default:
      break;
  }
  return state;
}

/** Forget the requests made before `micros` (kept in the order made: the oldest first). */
export function forgetRequestsBefore(state: RegistryState, micros: number): void {
  for (const [key, request] of state.requests) {
    if (request.at >= micros) return;
    state.requests.delete(key);
  }
}

// ── Commands ───────────────────────────────────────────────────────────────

interface CommandBase {
  readonly institution_id: string;
  /** The time the events record. */
  readonly occurred_at: string;
  readonly idempotency?: { readonly key: string; readonly sha256: string };
}

export interface BulkCreateSites extends CommandBase {
  readonly kind: 'bulk-create';
  readonly sites: ReadonlyArray<{ readonly title: string; readonly address?: string | undefined }>;
  /** Ids for the new sites, one per entry (the handler makes them). */
  readonly new_ids: readonly string[];
}

export interface ChangeMembership extends CommandBase {
  readonly kind: 'assign' | 'unassign';
  readonly site_ids: readonly string[];
  readonly user_ids: readonly string[];
  /** Profiles of the institution among user_ids (the handler looks them up). */
  readonly known_users: ReadonlySet<string>;
}

export type SitesCommand = BulkCreateSites | ChangeMembership;

type SiteEvent = Extract<DomainEvent, { type: 'SiteCreated' | 'UserAssignedToSite' | 'UserUnassignedFromSite' | 'SiteRequestHandled' }>;

export type Decision =
  | { readonly outcome: 'accepted'; readonly events: readonly SiteEvent[]; readonly status: number; readonly response: unknown }
  /** The same Idempotency-Key and body as an earlier request: its answer, and nothing to append. */
  | { readonly outcome: 'replayed'; readonly status: number; readonly response: unknown }
  | { readonly outcome: 'rejected'; readonly status: number; readonly detail: string };

const reject = (status: number, detail: string): Decision => ({ outcome: 'rejected', status, detail });

export function decide(state: RegistryState, command: SitesCommand): Decision {
  if (command.idempotency) {
    const earlier = state.requests.get(command.idempotency.key);
    if (earlier) {
      if (earlier.sha256 !== command.idempotency.sha256) {
        return reject(422, `Idempotency-Key "${command.idempotency.key}" was used with a different request.`);
      }
      return { outcome: 'replayed', status: earlier.status, response: JSON.parse(earlier.responseJson) };
    }
  }
  const decided = command.kind === 'bulk-create' ? bulkCreate(state, command) : membership(state, command);
  if (decided.outcome !== 'accepted' || !command.idempotency) return decided;
  const handled: SiteEvent = {
    type: 'SiteRequestHandled',
    data: {
      institution_id: command.institution_id,
      occurred_at: command.occurred_at,
      idempotency_key: command.idempotency.key,
      request_sha256: command.idempotency.sha256,
      status: decided.status,
      response: decided.response as EventData<'SiteRequestHandled'>['response'],
    },
  };
  return { ...decided, events: [...decided.events, handled] };
}

function bulkCreate(state: RegistryState, command: BulkCreateSites): Decision {
  const seen = new Map<string, number>();
  for (const [i, site] of command.sites.entries()) {
    const title = site.title.trim();
    const key = normalizeTitle(title);
    if (title === '') return reject(400, `sites.${i}.title: must not be blank.`);
    const first = seen.get(key);
    if (first !== undefined) return reject(400, `sites.${i}.title: "${title}" appears twice in the request (also sites.${first}.title).`);
    if (state.titles.has(key)) return reject(400, `sites.${i}.title: a site titled "${title}" already exists.`);
    seen.set(key, i);
  }
  const { institution_id, occurred_at } = command;
  const events: SiteEvent[] = command.sites.map((site, i) => ({
    type: 'SiteCreated',
    data: {
      institution_id,
      occurred_at,
      site_id: command.new_ids[i]!,
      title: site.title.trim(),
      ...(site.address === undefined ? {} : { address: site.address }),
    },
  }));
  // The new sites as a GET will show them.
  const at = parseEventTimestamp(occurred_at) ?? 0;
  const results = events.map((e) => {
    const d = e.data as EventData<'SiteCreated'>;
    return siteBody({ id: d.site_id, institution_id, title: d.title, address: d.address ?? '', user_ids: [], created_at: at, updated_at: at });
  });
  return { outcome: 'accepted', events, status: 201, response: { count: results.length, results } };
}

function membership(state: RegistryState, command: ChangeMembership): Decision {
  for (const [i, siteId] of command.site_ids.entries()) {
    if (!state.sites.has(siteId)) return reject(400, `site_ids.${i}: no site ${siteId} in this institution.`);
  }
  for (const [i, userId] of command.user_ids.entries()) {
    if (!command.known_users.has(userId)) return reject(400, `user_ids.${i}: no profile ${userId} in this institution.`);
  }
  const assign = command.kind === 'assign';
  const events: SiteEvent[] = [];
  let unchanged = 0;
  const done = new Set<string>();
  for (const siteId of command.site_ids) {
    const users = state.sites.get(siteId)!;
    for (const userId of command.user_ids) {
      const pair = `${siteId} ${userId}`;
      if (done.has(pair)) continue; // the same pair twice in one request counts once
      done.add(pair);
      if (users.has(userId) === assign) {
        unchanged++;
        continue;
      }
      const data = { institution_id: command.institution_id, occurred_at: command.occurred_at, site_id: siteId, user_id: userId };
      events.push(assign ? { type: 'UserAssignedToSite', data } : { type: 'UserUnassignedFromSite', data });
    }
  }
  const response = assign
    ? { assigned: events.length, already_assigned: unchanged }
    : { unassigned: events.length, not_assigned: unchanged };
  return { outcome: 'accepted', events, status: 200, response };
}
