/**
 * Synthetic data for the benchmark: N shifts across several institutions
 * (the first holding half), each with a known API key, as NDJSON lines of
 * the event catalog. Deterministic for a given seed.
 */
import { createHash } from 'node:crypto';
import { mulberry32 } from '../scripts/random.js';

export interface BenchData {
  lines: string[];
  keys: string[];
  /** For each institution: a sample of its opportunity and category ids. */
  samples: Array<{ opportunity: string; category: string }>;
  /** For each institution: how many shifts it holds. */
  counts: number[];
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const TITLES = ['Morning sort', 'Evening pack', 'Delivery run', 'Front desk', 'Night inventory', 'Pantry shift', 'Dog walk', 'Class helper'];

export function generate(shifts: number, institutions: number, seed = 42): BenchData {
  const rand = mulberry32(seed);
  let counter = 0;
  const uuid = () => {
    counter += 1;
    const h = (counter * 2654435761 + seed).toString(16).padStart(12, '0').slice(-12);
    const r = Math.floor(rand() * 0xffffffff).toString(16).padStart(8, '0');
    return `${r}-${h.slice(0, 4)}-4${h.slice(4, 7)}-8${h.slice(7, 10)}-${counter.toString(16).padStart(12, '0')}`;
  };
  const iso = (ms: number, micros = 0) => {
    const base = new Date(ms).toISOString().slice(0, 19);
    return micros === 0 ? `${base}Z` : `${base}.${String(micros).padStart(6, '0')}Z`;
  };
  const lines: string[] = [];
  const keys: string[] = [];
  const samples: BenchData['samples'] = [];
  const counts: number[] = [];
  const emit = (type: string, data: object) => lines.push(JSON.stringify({ type, id: uuid(), data }));
  const t0 = Date.UTC(2026, 0, 1);

  for (let i = 0; i < institutions; i++) {
    const institution_id = uuid();
    const base = { institution_id };
    const key = `bench-key-${i}`;
    keys.push(key);
    let clock = t0;
    const at = () => iso((clock += 1000));
    emit('InstitutionRegistered', { ...base, occurred_at: at(), name: `Org ${i}`, share_base_url: `https://org${i}.example` });
    emit('ApiKeyIssued', {
      ...base,
      occurred_at: at(),
      key_id: uuid(),
      key_sha256: createHash('sha256').update(key).digest('hex'),
    });
    const categories = Array.from({ length: 5 }, (_, c) => {
      const category_id = uuid();
      emit('CategoryCreated', { ...base, occurred_at: at(), category_id, title: `Category ${c}`, description: 'Bench category' });
      return category_id;
    });
    const opportunities = Array.from({ length: 20 }, (_, o) => {
      const opportunity_id = uuid();
      emit('OpportunityCreated', {
        ...base,
        occurred_at: at(),
        opportunity_id,
        category_id: categories[o % 5]!,
        title: `Opportunity ${o}`,
        description: 'Bench opportunity',
        status: (o % 3) as 0 | 1 | 2,
      });
      return { opportunity: opportunity_id, category: categories[o % 5]! };
    });
    samples.push(opportunities[1]!);
    // The first institution holds half of the shifts, the others share the rest.
    const count = institutions === 1 ? shifts : i === 0 ? Math.ceil(shifts / 2) : Math.floor(shifts / 2 / (institutions - 1));
    counts.push(count);
    for (let s = 0; s < count; s++) {
      const opportunity = opportunities[Math.floor(rand() * opportunities.length)]!;
      const start = t0 + 30 * DAY + Math.floor(rand() * 365) * DAY + Math.floor(rand() * 48) * (HOUR / 2);
      emit('ShiftCreated', {
        ...base,
        occurred_at: iso((clock += 17), s % 4 === 0 ? Math.floor(rand() * 999_999) + 1 : 0),
        shift_id: uuid(),
        opportunity_id: opportunity.opportunity,
        title: TITLES[s % TITLES.length]!,
        description: s % 5 === 0 ? null : 'Bring water and closed-toe shoes.',
        shift_start_at: iso(start),
        shift_end_at: iso(start + (2 + (s % 5)) * HOUR),
        spots: 1 + Math.floor(rand() * 20),
        location: 'Main site',
      });
    }
  }
  return { lines, keys, samples, counts };
}
