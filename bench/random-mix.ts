/**
 * The benchmark's random mix: queries drawn from the whole parameter space
 * of every endpoint that filters (each search endpoint, and the sites list),
 * not from shapes anyone tuned for. Each query: an institution (half of
 * them the largest), an endpoint, 0–3 filters chosen from the endpoint's
 * full parameter list as the resource declares it (every name and alias,
 * every range suffix, relation filters, and date/time windows as two
 * filters on one parameter), values the institution's data holds (and now
 * and then one it does not), any of its orderings or none, limit 10 or
 * 100. The page is drawn later, up to the last page of the query's count.
 * A fresh seed gives a fresh mix.
 */
import { mulberry32 } from '../scripts/random.js';
import type { ParamDef } from '../src/query/resource.js';
import { resources } from '../src/resources/index.js';
import type { BenchData, InstitutionPools } from './generate.js';

export interface RandomQuery {
  /** The path and query string, without page (see `withPage`). */
  readonly path: string;
  readonly key: string;
  readonly institution: number;
  readonly limit: number;
  /** What kind of query it is: endpoint, filter kinds, ordering (see classOf). */
  readonly kinds: string;
}

type AnyParam = ParamDef<unknown>;
const DAY = 86_400_000;
const SUFFIXES = ['', '.gt', '.gte', '.lt', '.lte'] as const;
const pad = (n: number) => String(n).padStart(2, '0');
const dateOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** How a filter is classed in the report: by what the engine must do with it. */
function kindOf(param: AnyParam, suffix: string): string {
  if (param.type === 'uuid' && param.primaryKey) return 'id';
  if (param.name.includes('.') && !param.name.startsWith('question') && param.type !== 'uuid') return 'relation-text';
  if (param.name.includes('.') && param.type === 'uuid') return 'through' in param && param.through ? 'relation-id' : 'code';
  if (param.type === 'text') return 'text';
  if (param.type === 'boolean' || param.type === 'choice') return 'code';
  return suffix === '' ? 'range-exact' : 'range';
}

export function randomQueries(data: Pick<BenchData, 'keys' | 'pools'>, n: number, seed: number): RandomQuery[] {
  const rand = mulberry32(seed);
  const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  /** A value that matches nothing, now and then. */
  const miss = () => rand() < 0.05;
  const unknownId = () => `${int(0x10000000, 0x7fffffff).toString(16)}-0000-4000-8000-000000000000`;
  /** Text as a user might type it: any case. */
  const anyCase = (text: string) => (rand() < 0.2 ? text.toUpperCase() : rand() < 0.2 ? text.toLowerCase() : text);
  const time = () => `${pad(int(5, 22))}:${pick(['00', '15', '30', '45'])}`;
  const timestamp = (from: number, to: number) => {
    const ms = from + Math.floor(rand() * (to - from));
    const exact = new Date(ms).toISOString();
    return rand() < 0.5 ? `${exact.slice(0, 16)}Z` : rand() < 0.5 ? `${exact.slice(0, 19)}Z` : `${exact.slice(0, 10)}`;
  };

  const valueOf = (path: string, param: AnyParam, pools: InstitutionPools): string => {
    const [d0, d1] = pools.startDays;
    const [c0, c1] = pools.created;
    const ids = (kind: keyof InstitutionPools['ids']) => (miss() ? unknownId() : pick(pools.ids[kind]));
    const shown = (xs: readonly string[]) => (miss() ? 'no such value' : anyCase(pick(xs)));
    switch (`${path} ${param.name}`) {
      case 'shifts id':
        return ids('shift');
      case 'shifts title':
        return shown(pools.shiftTitles);
      case 'shifts description':
        return shown(pools.shiftDescriptions);
      case 'shifts updated_at':
      case 'opportunities updated_at':
      case 'profiles updated_at':
      case 'form-submissions updated_at':
      case 'sequences updated_at':
      case 'user-sequences updated_at':
      case 'reservations updated_at':
      case 'sites updated_at':
      case 'reservations created_at':
      case 'shifts created_at':
      case 'opportunities created_at':
      case 'profiles created_at':
      case 'form-submissions created_at':
      case 'sequences created_at':
      case 'user-sequences created_at':
        return timestamp(c0, c1);
      case 'shifts created_date':
      case 'profiles created_date':
      case 'sequences created_date':
        return dateOf(c0 + Math.floor(rand() * (c1 - c0 + DAY)));
      case 'shifts shift_date':
      case 'reservations shift_date':
        return dateOf(d0 + int(-3, (d1 - d0) / DAY + 3) * DAY);
      case 'shifts shift_start_at':
      case 'shifts shift_end_at':
      case 'reservations shift_start_at':
        return rand() < 0.5 ? `${dateOf(d0 + int(0, (d1 - d0) / DAY) * DAY)}T${time()}:00Z` : timestamp(d0, d1 + DAY);
      case 'shifts shift_start_time':
      case 'shifts shift_end_time':
        return time();
      case 'shifts spots':
        return String(int(0, 22));
      case 'reservations id':
        return ids('reservation');
      case 'reservations status':
        return pick(['1', '6']);
      case 'reservations user.id':
        return ids('profile');
      case 'reservations shift.id':
        return ids('shift');
      case 'reservations logged_hours':
        return pick(['0', '1', '2', '2.5', '3', '4', '5', '6']);
      case 'reservations opportunity.id':
      case 'shifts opportunity.id':
        return miss() ? unknownId() : pick(pools.opportunities).id;
      case 'shifts opportunity.title':
      case 'opportunities title':
        return shown(pools.opportunities.map((o) => o.title));
      case 'opportunities description':
        return shown(pools.opportunities.map((o) => o.description));
      case 'shifts category.id':
      case 'reservations category.id':
      case 'opportunities category.id':
        return miss() ? unknownId() : pick(pools.categories).id;
      case 'shifts category.title':
      case 'opportunities category.title':
        return shown(pools.categories.map((c) => c.title));
      case 'opportunities id':
        return miss() ? unknownId() : pick(pools.opportunities).id;
      case 'opportunities status':
        return String(int(0, 2));
      case 'profiles id':
        return ids('profile');
      case 'profiles first_name':
      case 'form-submissions user.first_name':
      case 'user-sequences user.first_name':
        return shown(pools.profiles.map((p) => p.first));
      case 'profiles last_name':
      case 'form-submissions user.last_name':
      case 'user-sequences user.last_name':
        return shown(pools.profiles.map((p) => p.last));
      case 'profiles email':
      case 'form-submissions user.email':
      case 'user-sequences user.email':
        return shown(pools.profiles.map((p) => p.email));
      case 'profiles phone_number':
        return shown(pools.profiles.map((p) => p.phone).filter((p) => p !== ''));
      case 'profiles is_offline':
        return pick(['true', 'false', '1', '0']);
      case 'profiles tag':
        return shown(pools.tags);
      case 'form-submissions id':
        return ids('submission');
      case 'form-submissions question.id':
        return shown(pools.questions);
      case 'form-submissions question.answer':
        return shown(pools.answers);
      case 'form-submissions user.id':
      case 'user-sequences user.id':
      case 'sites user.id':
        return ids('profile');
      case 'form-submissions form.id':
        return shown(pools.forms.map((f) => f.id));
      case 'form-submissions form.title':
        return shown(pools.forms.map((f) => f.title));
      case 'form-submissions folder.name':
        return shown(pools.folders);
      case 'sequences id':
        return ids('sequence');
      case 'sequences title':
        return shown(pools.sequences.map((s) => s.title));
      case 'sequences description':
        return shown(pools.sequences.map((s) => s.description));
      case 'sequences status':
        return shown(pools.sequences.map((s) => s.status));
      case 'sequences display_status':
        return shown(pools.sequences.map((s) => s.display_status));
      case 'user-sequences id':
        return ids('usersequence');
      case 'sites title':
        return shown(pools.siteTitles);
      default:
        throw new Error(`no values for ${path} ${param.name}`);
    }
  };

  /** A window on a range parameter: two filters, the second `width` later. */
  const windowOf = (path: string, param: AnyParam, pools: InstitutionPools): [string, string] => {
    const from = valueOf(path, param, pools);
    if (param.type === 'date') return [from, dateOf(Date.parse(from) + int(1, 60) * DAY)];
    if (param.type === 'time') return [from, `${pad(Math.min(23, Number(from.slice(0, 2)) + int(1, 4)))}${from.slice(2)}`];
    if (param.type === 'integer' || param.type === 'number') return [from, String(Number(from) + int(1, 5))];
    const start = Date.parse(from.length === 10 ? `${from}T00:00:00Z` : from);
    return [from, new Date(start + int(1, 45) * DAY + int(0, 23) * 3_600_000).toISOString()];
  };

  const endpoints = Object.values(resources)
    .filter((def) => def.endpoints.search || def.endpoints.filteredList)
    .map((def) => ({
      path: def.path,
      url: def.endpoints.search ? `/api/${def.path}/search/` : `/api/${def.path}/`,
      params: def.params as readonly AnyParam[],
      orderings: Object.keys(def.orderings),
      // Shifts are most of what is asked for; every other endpoint gets its share.
      weight: def.path === 'shifts' ? 4 : 1,
    }));
  const totalWeight = endpoints.reduce((a, e) => a + e.weight, 0);

  const seen = new Set<string>();
  const out: RandomQuery[] = [];
  for (let attempts = 0; out.length < n && attempts < n * 20; attempts++) {
    const institution = rand() < 0.5 ? 0 : int(1, data.keys.length - 1 || 1) % data.keys.length;
    const pools = data.pools[institution]!;
    let w = rand() * totalWeight;
    const endpoint = endpoints.find((e) => (w -= e.weight) < 0) ?? endpoints[0]!;
    const query = new URLSearchParams();
    const kinds: string[] = [];
    const nFilters = int(0, 3);
    for (let f = 0; f < nFilters; f++) {
      const param = pick(endpoint.params);
      const name = pick([param.name, ...(param.aliases ?? [])]);
      const ranged = 'range' in param && param.range;
      if (ranged && f + 1 < nFilters && rand() < 0.5) {
        // A window: from (inclusive) to (exclusive), as two filters.
        const [from, to] = windowOf(endpoint.path, param, pools);
        if (query.has(`${name}.gte`) || query.has(`${name}.lt`)) continue;
        query.set(`${name}.gte`, from);
        query.set(`${name}.lt`, to);
        kinds.push('window');
        f++;
        continue;
      }
      const suffix = ranged ? pick(SUFFIXES) : '';
      if (query.has(name + suffix)) continue;
      query.set(name + suffix, valueOf(endpoint.path, param, pools));
      kinds.push(kindOf(param, suffix));
    }
    const ordering = endpoint.orderings.length > 0 && rand() < 1 - 1 / (endpoint.orderings.length + 1) ? pick(endpoint.orderings) : undefined;
    if (ordering) query.set('ordering', ordering);
    const limit = rand() < 0.5 ? 10 : 100;
    query.set('limit', String(limit));
    const path = `${endpoint.url}?${query}`;
    const key = data.keys[institution]!;
    if (seen.has(`${key} ${path}`)) continue;
    seen.add(`${key} ${path}`);
    kinds.sort();
    out.push({ path, key, institution, limit, kinds: `${endpoint.path} [${kinds.join(' ')}]${ordering ? ` ${ordering.replace(/^-/, '')}` : ''}` });
  }
  return out;
}

/** The query at a page drawn uniformly from its first to its last (for its count), and its class for the report. */
export function withPage(query: RandomQuery, count: number, rand: () => number): { path: string; cls: string; page: number } {
  const last = Math.max(1, Math.ceil(count / query.limit));
  const page = 1 + Math.floor(rand() * last);
  const depth = page === 1 ? 'first page' : page === last ? 'last page' : 'deep page';
  return { path: `${query.path}&page=${page}`, cls: `${query.kinds} ${depth}`, page };
}

/**
 * Whether a search's answer is a page of the list envelope (a count, and the page's results no more than the limit):
 * a server that answers 200 with anything else (a Buffer serialized as JSON, a truncated body) answered wrong.
 */
export function isPage(body: string, limit: number): boolean {
  try {
    const page = JSON.parse(body) as { count?: unknown; results?: unknown };
    return typeof page.count === 'number' && Array.isArray(page.results) && page.results.length <= limit;
  } catch {
    return false;
  }
}
