/**
 * The change feed's entries as LMDB keys and values, in as few bytes as
 * they fit (a feed has an entry for nearly every event of the log: at 1.77M
 * events, [institution id, commit, prepare] → [type, id, occurred_at] as
 * LMDB's default encodings took 408 MB and 6.6 s of CPU to write):
 *
 * - key: the institution's code (u32, see ReadModelStore) then commit and
 *   prepare (u64 each), big-endian: byte order is an institution's entries
 *   in log order;
 * - value: the record's id (16 bytes), occurred_at in microseconds (f64),
 *   then the event type's name (latin1).
 */
import type { EventType } from '../events/catalog.js';
import type { FeedEntry, FeedPosition } from './change-feed.js';

const KEY_BYTES = 4 + 8 + 8;
const TWO_32 = 2 ** 32;

function putU64(buffer: Buffer, offset: number, n: number): void {
  buffer.writeUInt32BE(Math.floor(n / TWO_32), offset);
  buffer.writeUInt32BE(n % TWO_32, offset + 4);
}

const u64 = (buffer: Buffer, offset: number) => buffer.readUInt32BE(offset) * TWO_32 + buffer.readUInt32BE(offset + 4);

/** The key of an institution's entry at a position (commit and prepare ≥ 0). */
export function feedKey(institution: number, { commit, prepare }: FeedPosition): Buffer {
  const key = Buffer.allocUnsafe(KEY_BYTES);
  key.writeUInt32BE(institution, 0);
  putU64(key, 4, commit);
  putU64(key, 12, prepare);
  return key;
}

/** The first key past every entry of an institution. */
export function feedEnd(institution: number): Buffer {
  const key = Buffer.alloc(4);
  key.writeUInt32BE(institution + 1, 0);
  return key;
}

export function feedPositionOf(key: Buffer): FeedPosition {
  return { commit: u64(key, 4), prepare: u64(key, 12) };
}

/** An entry's value: its id, when it occurred and its type. */
export function feedValue({ id, occurredAt, type }: Pick<FeedEntry, 'id' | 'occurredAt' | 'type'>): Buffer {
  const value = Buffer.allocUnsafe(16 + 8 + type.length);
  value.write(id.replaceAll('-', ''), 0, 16, 'hex');
  value.writeDoubleBE(occurredAt, 16);
  value.write(type, 24, 'latin1');
  return value;
}

export function decodeFeedValue(value: Buffer): Pick<FeedEntry, 'id' | 'occurredAt' | 'type'> {
  const hex = value.toString('hex', 0, 16);
  return {
    id: `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`,
    occurredAt: value.readDoubleBE(16),
    type: value.toString('latin1', 24) as EventType,
  };
}
