/**
 * JSON building blocks. Records are immutable, so a serialized fragment can
 * be cached against the record object and the nested records it shows: the
 * cache entry is valid while those are the same objects.
 */
import { formatTimestamp } from '../time.js';

export const str = (value: string | null): string => JSON.stringify(value);
export const ts = (micros: number | null): string => (micros === null ? 'null' : `"${formatTimestamp(micros)}"`);

export class FragmentCache<R extends object> {
  private readonly cache = new WeakMap<R, { deps: readonly unknown[]; json: string }>();

  get(record: R, deps: readonly unknown[], build: () => string): string {
    const hit = this.cache.get(record);
    if (hit && hit.deps.length === deps.length && hit.deps.every((d, i) => d === deps[i])) return hit.json;
    const json = build();
    this.cache.set(record, { deps, json });
    return json;
  }
}
