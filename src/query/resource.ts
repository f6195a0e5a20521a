/**
 * How a searchable resource is declared: its parameters (with aliases,
 * range suffixes and value types), its sorted indexes and its orderings,
 * all as data. The query schema (schema.ts) and the search engine
 * (engine.ts) are generic over these declarations.
 */
import type { ReadView } from '../../projections/projection.js';
import type { Kind, Records } from '../../projections/records.js';
import type { TableDef } from '../readmodel/model.js';
import type { MultiValue } from '../readmodel/table.js';
import type { JsonView } from '../resources/json.js';
import type { Identified } from '../readmodel/sorted-index.js';

interface ParamBase {
  /** The canonical name, as in SPEC.md. */
  readonly name: string;
  readonly aliases?: readonly string[];
}

/**
 * Exact, case-insensitive match on a string value (UUIDs are validated
 * first), answered one of three ways: by the record's id (`primaryKey`);
 * by a symbol column holding the value (in lower case for text), so the
 * filter compares codes, through an index led by that column when there is
 * one; or through a relation (`through`): the ids of the related records
 * that match, as codes of the column holding the relation. Values a
 * record holds several of (tags, answers, a site's users: `value`) are
 * looked up in the table's postings, the rows holding each value.
 */
export interface MatchParam<R> extends ParamBase {
  readonly type: 'text' | 'uuid';
  /** The record's own id: answered by a lookup instead of a scan. */
  readonly primaryKey?: boolean;
  /** A symbol column of the table holding the value, in lower case (ids are). */
  readonly symbol?: string;
  /** A filter on a related record: see Relation. */
  readonly through?: Relation;
  /** The record's values (matching any of them), for what no column holds: the table keeps the rows holding each value. */
  readonly value?: MultiValue<R>;
  /**
   * Filters of one group are tested together, by the resource's group
   * function, instead of one by one (question.id and question.answer must
   * hold for the same question).
   */
  readonly group?: string;
}

/**
 * Rows match when their `symbol` column holds the id of a record of
 * another resource (or table) that its parameter `param` matches, with the
 * same value: a shift's `category.id` is its opportunity's, so it is
 * the opportunities' `category.id` filter, answered on the opportunities
 * table, as a set of opportunity codes of the shifts table. The related
 * record is read as it is now: a relation changing moves its rows at once.
 */
export interface Relation {
  readonly symbol: string;
  /** The related records' declaration (a function: declarations refer to each other). */
  readonly table: () => SearchableTable;
  readonly param: string;
}

/** What a relation searches: a table definition with parameters. */
export interface SearchableTable {
  readonly kind: Kind;
  readonly params: readonly ParamDef<never>[];
  readonly groups?: Readonly<Record<string, (record: never, wanted: ReadonlyMap<string, string>, view: ReadView) => boolean>>;
}

/** A numeric column: exact match, or a range with the `.gt/.gte/.lt/.lte` suffixes. */
export interface RangeParam<R> extends ParamBase {
  /**
   * timestamp: the column holds microseconds; date: the column holds
   * microseconds and the filter takes whole UTC days of it; time: the column
   * holds microseconds since midnight UTC; integer: a whole number;
   * number: a decimal one.
   */
  readonly type: 'timestamp' | 'date' | 'time' | 'integer' | 'number';
  readonly range: boolean;
  /** The table column it filters (any index led by that column serves it). */
  readonly column: string;
}

/** One of a fixed set of values of a numeric column (e.g. an opportunity status). */
export interface ChoiceParam<R> extends ParamBase {
  readonly type: 'choice';
  readonly choices: readonly number[];
  readonly column: string;
}

/** True or false, held by a numeric column as 1 or 0. */
export interface BooleanParam<R> extends ParamBase {
  readonly type: 'boolean';
  readonly column: string;
}

export type ParamDef<R> = MatchParam<R> | RangeParam<R> | ChoiceParam<R> | BooleanParam<R>;

export interface OrderingDef {
  readonly index: string;
  readonly descending: boolean;
}

/** Which read endpoints a resource has under /api/<path>/. */
export interface Endpoints {
  /** GET …/search/ with the resource's parameters. */
  readonly search: boolean;
  /** GET …/{id}/ */
  readonly retrieve: boolean;
  /**
   * What the list itself takes besides page and limit: every parameter and
   * ordering (true: sites, whose list is their only search), some of them
   * by name (reservations: updated_at and its orderings, for sync), or
   * none (false: as DESIGN.md has lists; other keys are ignored).
   */
  readonly filteredList: boolean | { readonly params: readonly string[]; readonly orderings: readonly string[] };
}

export interface ResourceDef<K extends Kind, R extends Identified = Records[K]> extends TableDef<R> {
  readonly kind: K;
  /** Path segment under /api/ */
  readonly path: string;
  readonly endpoints: Endpoints;
  readonly params: readonly ParamDef<R>[];
  readonly orderings: Readonly<Record<string, OrderingDef>>;
  readonly defaultOrdering: OrderingDef;
  /** The record as the API shows it at the top level, as JSON text. */
  readonly json: (record: R, view: JsonView) => string;
  /** The kinds of the other records that JSON shows (a change to one remakes it). */
  readonly nests: readonly Kind[];
  /** Something else the JSON depends on, as a number that only grows (today's date, for ages). */
  readonly volatile?: (view: JsonView) => number;
  /** For each group of parameters: whether a record matches the wanted values, by canonical parameter name (lower case). */
  readonly groups?: Readonly<Record<string, (record: R, wanted: ReadonlyMap<string, string>, view: ReadView) => boolean>>;
  /** The record as retrieve shows it, where that differs from lists. */
  readonly retrieveJson?: (record: R, view: JsonView) => string;
}
