/**
 * Time values of the service. Timestamps are integer microseconds since the
 * Unix epoch (JavaScript's Date has only milliseconds), dates are whole days
 * since the epoch, and times of day are microseconds since midnight UTC.
 */

export const MICROS_PER_SECOND = 1_000_000;
export const MICROS_PER_DAY = 86_400 * MICROS_PER_SECOND;

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?(Z|[+-]\d{2}:\d{2})?)?$/;
const TIME_OF_DAY = /^(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?$/;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;

/** A real calendar date → days since 1970-01-01 (H. Hinnant's days_from_civil), else undefined. */
function daysFromCivil(year: number, month: number, day: number): number | undefined {
  if (month < 1 || month > 12 || day < 1) return undefined;
  if (day > (month === 2 && isLeap(year) ? 29 : DAYS_IN_MONTH[month - 1]!)) return undefined;
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

function fractionMicros(fraction: string | undefined): number {
  return fraction === undefined ? 0 : Number(fraction.padEnd(6, '0'));
}

/** `YYYY-MM-DD`, a real calendar date → days since the epoch. */
export function parseDate(text: string): number | undefined {
  const m = DATE.exec(text);
  if (!m) return undefined;
  return daysFromCivil(Number(m[1]), Number(m[2]), Number(m[3]));
}

/**
 * A timestamp filter value: `YYYY-MM-DD` (its midnight UTC) or
 * `YYYY-MM-DDTHH:MM[:SS[.ffffff]]` with `Z`, `±HH:MM` or no zone (UTC).
 */
export function parseTimestamp(text: string): number | undefined {
  const m = TIMESTAMP.exec(text);
  if (!m) return undefined;
  const days = daysFromCivil(Number(m[1]), Number(m[2]), Number(m[3]));
  if (days === undefined) return undefined;
  if (m[4] === undefined) return days * MICROS_PER_DAY;
  const hours = Number(m[4]);
  const minutes = Number(m[5]);
  const seconds = m[6] === undefined ? 0 : Number(m[6]);
  if (hours > 23 || minutes > 59 || seconds > 59) return undefined;
  let offsetMinutes = 0;
  const zone = m[8];
  if (zone !== undefined && zone !== 'Z') {
    const zh = Number(zone.slice(1, 3));
    const zm = Number(zone.slice(4, 6));
    if (zh > 23 || zm > 59) return undefined;
    offsetMinutes = (zone[0] === '-' ? -1 : 1) * (zh * 60 + zm);
  }
  const secondsOfDay = hours * 3600 + minutes * 60 + seconds - offsetMinutes * 60;
  return days * MICROS_PER_DAY + secondsOfDay * MICROS_PER_SECOND + fractionMicros(m[7]);
}

/** The number written in text[from, to), or -1 unless it is all ASCII digits. */
function digitsAt(text: string, from: number, to: number): number {
  let value = 0;
  for (let i = from; i < to; i++) {
    const d = text.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    value = value * 10 + d;
  }
  return value;
}

/**
 * The timestamp form events carry: `YYYY-MM-DDTHH:MM:SS[.ffffff]Z`. Read
 * by position (every event has several, and imports and replays read
 * millions).
 */
export function parseEventTimestamp(text: string): number | undefined {
  const n = text.length;
  if (n < 20 || n > 27 || n === 21 || text.charCodeAt(n - 1) !== 90 /* Z */) return undefined;
  if (text[4] !== '-' || text[7] !== '-' || text[10] !== 'T' || text[13] !== ':' || text[16] !== ':') return undefined;
  const year = digitsAt(text, 0, 4);
  const month = digitsAt(text, 5, 7);
  const day = digitsAt(text, 8, 10);
  const hours = digitsAt(text, 11, 13);
  const minutes = digitsAt(text, 14, 16);
  const seconds = digitsAt(text, 17, 19);
  if (year < 0 || month < 0 || day < 0 || hours < 0 || minutes < 0 || seconds < 0) return undefined;
  if (hours > 23 || minutes > 59 || seconds > 59) return undefined;
  let micros = 0;
  if (n > 20) {
    if (text[19] !== '.') return undefined;
    const fraction = digitsAt(text, 20, n - 1);
    if (fraction < 0) return undefined;
    micros = fraction * 10 ** (6 - (n - 21));
  }
  const days = daysFromCivil(year, month, day);
  if (days === undefined) return undefined;
  return days * MICROS_PER_DAY + (hours * 3600 + minutes * 60 + seconds) * MICROS_PER_SECOND + micros;
}

/** `HH:MM` or `HH:MM:SS[.ffffff]` → microseconds since midnight. */
export function parseTimeOfDay(text: string): number | undefined {
  const m = TIME_OF_DAY.exec(text);
  if (!m) return undefined;
  const hours = Number(m[1]);
  const minutes = Number(m[2]);
  const seconds = m[3] === undefined ? 0 : Number(m[3]);
  if (hours > 23 || minutes > 59 || seconds > 59) return undefined;
  return (hours * 3600 + minutes * 60 + seconds) * MICROS_PER_SECOND + fractionMicros(m[4]);
}


/** Days since the epoch → `YYYY-MM-DD`. */
export function formatDate(days: number): string {
  return new Date(days * 86_400_000).toISOString().slice(0, 10);
}

/**
 * Microseconds → `YYYY-MM-DDTHH:MM:SSZ`, with `.ffffff` when the microseconds
 * are not zero. Every record shown has a few: the day's `YYYY-MM-DDT` is
 * kept once made (records share few days), the time of day is made from a
 * table of two digits (a Date and its ISO string cost ten times as much).
 */
export function formatTimestamp(micros: number): string {
  const days = Math.floor(micros / MICROS_PER_DAY);
  let day = dayPrefixes.get(days);
  if (day === undefined) {
    day = `${formatDate(days)}T`;
    if (dayPrefixes.size >= MAX_DAY_PREFIXES) dayPrefixes.clear();
    dayPrefixes.set(days, day);
  }
  const inDay = micros - days * MICROS_PER_DAY;
  const seconds = Math.floor(inDay / MICROS_PER_SECOND);
  const sub = inDay - seconds * MICROS_PER_SECOND;
  const base = day + TWO_DIGITS[Math.floor(seconds / 3600)] + ':' + TWO_DIGITS[Math.floor(seconds / 60) % 60] + ':' + TWO_DIGITS[seconds % 60];
  return sub === 0 ? base + 'Z' : base + '.' + String(sub).padStart(6, '0') + 'Z';
}
const TWO_DIGITS = Array.from({ length: 100 }, (_, n) => String(n).padStart(2, '0'));
const dayPrefixes = new Map<number, string>();
/** Days kept at most (a century); past them, the kept days are forgotten and made again. */
const MAX_DAY_PREFIXES = 36_525;

export function dayOf(micros: number): number {
  return Math.floor(micros / MICROS_PER_DAY);
}

export function timeOfDay(micros: number): number {
  return micros - dayOf(micros) * MICROS_PER_DAY;
}

/** Whole years between a date of birth and a day, both in days since the epoch. */
export function ageOn(dateOfBirth: number, today: number): number {
  const born = new Date(dateOfBirth * 86_400_000);
  const now = new Date(today * 86_400_000);
  let age = now.getUTCFullYear() - born.getUTCFullYear();
  const beforeBirthday =
    now.getUTCMonth() < born.getUTCMonth() ||
    (now.getUTCMonth() === born.getUTCMonth() && now.getUTCDate() < born.getUTCDate());
  if (beforeBirthday) age -= 1;
  return age;
}
