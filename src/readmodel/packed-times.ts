/**
 * Records as the read model keeps them: the times of the kinds with many
 * records (microseconds since the epoch, as projections make them) held as
 * two small integers each, whole minutes and the microseconds past the
 * minute, under names of their own (`created_at$min`, `created_at$us`).
 *
 * V8 holds a small integer (31 bits and a sign) in the object itself, and
 * any other number as a heap object of its own, which every full
 * collection marks: at 1,000,000 shifts the records' times were 6.1M of
 * the heap's 11.8M objects. (In a microbenchmark, a full collection of
 * 1.5M records of four times each took 252-318 ms, and of the same records
 * with small integers in their place 107-140 ms.)
 *
 * The model hands records out as projections made them (`unpack`: a new
 * object, the same fields in the same order); what it stores is a
 * `Stored` record, whose times cannot be read by mistake as numbers.
 */
import type { Kind, Records } from '../../projections/records.js';

/** A kind's fields, in the order its projections make them; the times among them are packed. */
export interface Layout<K extends Kind> {
  readonly fields: readonly (keyof Records[K] & string)[];
  readonly times: readonly (keyof Records[K] & string)[];
}

/** Every field that is a time in some kind's record (what a stored record does not show). */
type TimeField = 'created_at' | 'updated_at' | 'shift_start_at' | 'shift_end_at' | 'arrival_time' | 'departure_time';

/**
 * A kind's layout: every field of its record, in the order its projections make them (`fields`: a field added to the
 * record and not here fails to compile), and the times among them (each one of TimeField, or it fails to compile).
 */
const layout =
  <K extends Kind>() =>
  <const F extends readonly (keyof Records[K] & string)[]>(
    fields: F & (Exclude<keyof Records[K], F[number]> extends never ? unknown : never),
    times: readonly (F[number] & TimeField)[],
  ): Layout<K> => ({ fields, times });

/** The kinds whose times are packed: those with many records (not one nested through `FragmentCache`, which caches by the record object). */
export const PACKED = {
  shift: layout<'shift'>()(
    ['id', 'institution_id', 'opportunity_id', 'title', 'description', 'shift_start_at', 'shift_end_at', 'spots', 'location', 'spots_reserved', 'removed', 'created_at', 'updated_at'],
    ['shift_start_at', 'shift_end_at', 'created_at', 'updated_at'],
  ),
  reservation: layout<'reservation'>()(
    ['id', 'institution_id', 'shift_id', 'opportunity_id', 'shift_start_at', 'user_id', 'status', 'logged_hours', 'arrival_time', 'departure_time', 'hours_approved_by', 'created_at', 'updated_at'],
    ['shift_start_at', 'arrival_time', 'departure_time', 'created_at', 'updated_at'],
  ),
  site: layout<'site'>()(['id', 'institution_id', 'title', 'address', 'user_ids', 'created_at', 'updated_at'], ['created_at', 'updated_at']),
} as const satisfies { readonly [K in Kind]?: Layout<K> };

/**
 * A record as the model stores it: every field but its times, which are read through `unpack`. (A record as made is
 * one too: the model stores a kind not in PACKED as made.)
 */
export type Stored<R> = Omit<R, TimeField>;

export const MICROS_PER_MINUTE = 60_000_000;

/** Whether a time is held as two small integers: a safe integer (and not -0, which would read back as 0). */
const splits = (value: unknown): value is number => Number.isSafeInteger(value) && (value !== 0 || 1 / (value as number) > 0);

/**
 * The `$min` field of a time: its whole minutes, or null when it is not held as two small integers (see microsOf).
 * (`| 0`: a 32-bit integer, which V8 then stores as one; the minutes of a safe integer are below 2^28.)
 */
export function minutesOf(value: number | null): number | null {
  return splits(value) ? Math.floor(value / MICROS_PER_MINUTE) | 0 : null;
}

/**
 * The `$us` field of a time whose `$min` field is `minutes`: the microseconds past that minute; -1 for null; any other
 * value (a number that is not a safe integer: never a time parsed from the log before the year 2255) in an array of
 * one. Never a number that is not a small integer: a field that held one would hold every value of every record of
 * its shape boxed.
 */
export function microsOf(value: number | null, minutes = minutesOf(value)): number | [unknown] {
  if (minutes !== null) return (value! - minutes * MICROS_PER_MINUTE) | 0;
  return value === null ? -1 : [value];
}

/**
 * A time's two fields in an object literal of generated code (this module's packers, the snapshot decoder's makers),
 * the time being `value` (code read twice, run once for each field): the code's function declares `let m` and is
 * given minutesOf and microsOf.
 */
export const packedFieldsCode = (field: string, value: string): string =>
  `${JSON.stringify(`${field}$min`)}: (m = minutesOf(${value})), ${JSON.stringify(`${field}$us`)}: microsOf(${value}, m)`;

/** A time from its two fields. */
export function timeOf(minutes: number | null, micros: number | [unknown]): number | null {
  if (minutes !== null) return minutes * MICROS_PER_MINUTE + (micros as number);
  return micros === -1 ? null : ((micros as [number])[0]);
}

interface Packing {
  readonly pack: (record: object) => object;
  readonly unpack: (record: object) => object;
}

/**
 * A kind's pack and unpack: one object literal each, generated once from its layout (each field read by name; names
 * enter the code only as JSON string literals), so that every stored record of a kind has one shape, and every
 * record handed out the shape its projections make.
 */
function packingOf(layout: Layout<Kind>): Packing {
  const times = new Set<string>(layout.times);
  const name = (field: string) => JSON.stringify(field);
  const packed = layout.fields.map((field) => (times.has(field) ? packedFieldsCode(field, `r[${name(field)}]`) : `${name(field)}: r[${name(field)}]`));
  const unpacked = layout.fields.map((field) =>
    times.has(field) ? `${name(field)}: timeOf(r[${name(`${field}$min`)}], r[${name(`${field}$us`)}])` : `${name(field)}: r[${name(field)}]`,
  );
  const make = (fields: string[]) =>
    new Function('minutesOf', 'microsOf', 'timeOf', `return (r) => { let m; return { ${fields.join(', ')} }; };`)(minutesOf, microsOf, timeOf) as (record: object) => object;
  return { pack: make(packed), unpack: make(unpacked) };
}

const packings = Object.fromEntries(Object.entries(PACKED).map(([kind, layout]) => [kind, packingOf(layout as Layout<Kind>)])) as { readonly [K in Kind]?: Packing };

/** A record as the model stores it. */
export function pack<K extends Kind>(kind: K, record: Records[K]): Stored<Records[K]> {
  const packing = packings[kind];
  return (packing ? packing.pack(record) : record) as Stored<Records[K]>;
}

/** A stored record as its projections made it (a new object for a kind whose times are packed). */
export function unpack<K extends Kind>(kind: K, record: Stored<Records[K]>): Records[K] {
  const packing = packings[kind];
  return (packing ? packing.unpack(record) : record) as Records[K];
}

/** A kind's unpack as one function, for a table of it (undefined: its records are stored as made). */
export function unpackerOf<K extends Kind>(kind: K): ((record: Stored<Records[K]>) => Records[K]) | undefined {
  return packings[kind]?.unpack as ((record: Stored<Records[K]>) => Records[K]) | undefined;
}

/** The keys of a stored record of a layout, in order: each time's two fields in its place. */
export const storedKeysOf = (layout: Layout<Kind>): readonly string[] =>
  layout.fields.flatMap((field) => ((layout.times as readonly string[]).includes(field) ? [`${field}$min`, `${field}$us`] : [field]));

/** A kind's layout, if its times are packed. */
export const layoutOf = (kind: Kind): Layout<Kind> | undefined => (PACKED as { readonly [K in Kind]?: Layout<Kind> })[kind];

/** Whether records of this kind are stored packed (unpack then makes a new object). */
export const isPacked = (kind: Kind): boolean => packings[kind] !== undefined;

/** Stored records as their projections made them, one at a time. */
export function unpacked<K extends Kind>(kind: K, records: Iterable<Stored<Records[K]>>): Iterable<Records[K]> {
  if (!isPacked(kind)) return records as Iterable<Records[K]>;
  return (function* () {
    for (const record of records) yield unpack(kind, record);
  })();
}
