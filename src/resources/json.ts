/**
 * JSON building blocks. Records are immutable, so a serialized fragment can
 * be cached against the record object and the nested records it shows: the
 * cache entry is valid while those are the same objects. Checking that
 * costs a lookup per nested record, so each entry also keeps the revisions
 * of the kinds it nests: while none of those kinds has changed at all, the
 * entry is valid without any lookup.
 */
import type { ReadView } from '../../projections/projection.js';
import type { Kind } from '../../projections/records.js';
import { formatDate, formatTimestamp } from '../time.js';

/** Characters a JSON string must escape (and lone surrogates, which JSON.stringify escapes). */
const ESCAPED = /[\u0000-\u001f"\\\ud800-\udfff]/;
/** A string as JSON: quoted as it is when nothing in it needs escaping (twice as fast as JSON.stringify). */
export const str = (value: string | null): string => (value === null ? 'null' : ESCAPED.test(value) ? JSON.stringify(value) : `"${value}"`);
/**
 * A text many records share (a title, a description, a location) as JSON,
 * kept once made: a lookup is a tenth of making it. Not for ids or anything
 * else each record has its own of. At most MAX_TEXTS are kept (then all are
 * forgotten and made again).
 */
export function text(value: string | null): string {
  if (value === null) return 'null';
  let quoted = texts.get(value);
  if (quoted === undefined) {
    quoted = str(value);
    if (texts.size >= MAX_TEXTS) texts.clear();
    texts.set(value, quoted);
  }
  return quoted;
}
const texts = new Map<string, string>();
const MAX_TEXTS = 50_000;
/** Any JSON value (objects and arrays from events, numbers, booleans). */
export const json = (value: unknown): string => JSON.stringify(value ?? null);
export const date = (days: number | null): string => (days === null ? 'null' : `"${formatDate(days)}"`);
export const ts = (micros: number | null): string => (micros === null ? 'null' : `"${formatTimestamp(micros)}"`);

/** What serializers read: records, and a counter per kind (and institution) that moves on every change. */
export interface JsonView extends ReadView {
  revision(kind: Kind, institutionId?: string): number;
  /** Today, in days since the epoch (for ages). */
  today(): number;
}

/** A number that moves whenever a record of one of these kinds of an institution changes. */
export function stampOf(view: JsonView, kinds: readonly Kind[], institutionId: string): number {
  let stamp = 0;
  for (const kind of kinds) stamp += view.revision(kind, institutionId);
  return stamp;
}

interface Entry<V> {
  stamp: number;
  readonly deps: readonly unknown[];
  readonly value: V;
}

export interface FragmentDef<R, V> {
  /** The kinds of the nested records the fragment shows. */
  readonly nests: readonly Kind[];
  /** The nested records themselves, in a fixed order. */
  readonly deps: (record: R, view: ReadView) => readonly unknown[];
  readonly build: (record: R, view: JsonView) => V;
}

export class FragmentCache<R extends object, V> {
  private readonly cache = new WeakMap<R, Entry<V>>();

  constructor(private readonly def: FragmentDef<R, V>) {}

  get(record: R, view: JsonView): V {
    let stamp = 0;
    for (const kind of this.def.nests) stamp += view.revision(kind);
    const hit = this.cache.get(record);
    if (hit !== undefined && hit.stamp === stamp) return hit.value;
    const deps = this.def.deps(record, view);
    if (hit !== undefined && sameItems(hit.deps, deps)) {
      hit.stamp = stamp;
      return hit.value;
    }
    const value = this.def.build(record, view);
    this.cache.set(record, { stamp, deps, value });
    return value;
  }
}

function sameItems(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
