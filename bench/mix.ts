/**
 * The benchmark's search mix: 130 requests over the institutions of a
 * data set (half of them to the largest), cycling through the query
 * shapes below with random dates, spots, page sizes and deep pages.
 * Deterministic for a data set and the counts its lists hold.
 */
import type { BenchData } from './generate.js';

export interface MixRequest {
  readonly path: string;
  /** The API key to send. */
  readonly key: string;
  /** Which of the query shapes it is. */
  readonly shape: number;
}

/** What each institution's lists hold, as the API counts them (deep pages go up to their last page). */
export interface ListCounts {
  readonly shifts: readonly number[];
  readonly reservations: readonly number[];
  readonly profiles: readonly number[];
}

export function mixRequests(data: Pick<BenchData, 'keys' | 'samples'>, counts: ListCounts, n = 130): MixRequest[] {
  const institutions = data.keys.length;
  const out: MixRequest[] = [];
  let seed = 7;
  const next = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  const day = (offset: number) => new Date(Date.UTC(2026, 1, 1) + offset * 86_400_000).toISOString().slice(0, 10);
  for (let i = 0; i < n; i++) {
    const inst = next() < 0.5 ? 0 : 1 + Math.floor(next() * (institutions - 1 || 1)) % institutions;
    const key = data.keys[inst]!;
    const sample = data.samples[inst]!;
    const d = Math.floor(next() * 330);
    const spots = 1 + Math.floor(next() * 15);
    const limit = next() < 0.5 ? 10 : 100;
    // Deep pages: anywhere up to the last page of this institution.
    const deepPage = (count: number, size: number) => 1 + Math.floor(next() * Math.max(1, Math.floor(count / size)));
    const queries = [
      `/api/shifts/search/?shift_date.gte=${day(d)}&shift_date.lt=${day(d + 7)}&limit=${limit}`,
      `/api/shifts/search/?date=${day(d)}&ordering=-spots&limit=${limit}`,
      `/api/shifts/search/?spots.gte=${spots}&spots.lte=${spots + 2}&ordering=spots&limit=${limit}`,
      `/api/shifts/search/?ordering=-shift_end_at&limit=${limit}`,
      `/api/shifts/search/?ordering=created_at&page=${deepPage(counts.shifts[inst]!, limit)}&limit=${limit}`,
      `/api/shifts/?page=${deepPage(counts.shifts[inst]!, 10)}&limit=10`,
      `/api/shifts/search/?start_time.gte=09:00&start_time.lt=09:30&shift_date.gte=${day(d)}&shift_date.lt=${day(d + 30)}&limit=${limit}`,
      `/api/shifts/search/?shift_start_at.gte=${day(d)}T06:00:00Z&shift_start_at.lt=${day(d + 1)}T06:00:00Z&opportunity_id=${sample.opportunity}&limit=${limit}`,
      `/api/shifts/search/?created_date.gte=2026-01-01&spots=${spots}&limit=10&page=2`,
      // Counts over the whole institution.
      `/api/shifts/search/?spots.gte=${spots}&limit=1`,
      `/api/reservations/?page=${deepPage(counts.reservations[inst]!, limit)}&limit=${limit}`,
      `/api/profiles/?page=${deepPage(counts.profiles[inst]!, 10)}&limit=10`,
      `/api/shifts/${sample.shift}/`,
    ];
    out.push({ path: queries[i % queries.length]!, key, shape: i % queries.length });
  }
  return out;
}
