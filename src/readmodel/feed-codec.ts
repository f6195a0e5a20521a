/**
 * The change feed's entries as LMDB keys and values, in as few bytes and as
 * few puts as they fit (a feed has an entry for nearly every event of the
 * log: at 1.77M events, [institution id, commit, prepare] → [type, id,
 * occurred_at] as LMDB's default encodings took 408 MB and 6.6 s of CPU to
 * write; an entry a put, in this encoding, still 6 s of a rebuild's 11 s on
 * its main thread):
 *
 * - key: the institution's code (u32, see ReadModelStore) then commit and
 *   prepare (u64 each), big-endian, of the first entry of a block: byte
 *   order is an institution's blocks in log order;
 * - value: a block of the institution's entries that follow in log order
 *   (up to BLOCK_ENTRIES), each its commit and prepare (u64), the record's
 *   id (16 bytes), occurred_at in microseconds (f64), then the length (u8)
 *   and name (latin1) of the event type.
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

/** A key before every entry of an institution (and after those of the institutions before it). */
export function feedStart(institution: number): Buffer {
  return feedEnd(institution - 1);
}

/** Entries a block holds at most. */
export const BLOCK_ENTRIES = 256;

type BlockEntry = FeedPosition & Pick<FeedEntry, 'id' | 'occurredAt' | 'type'>;

/** A block's value: these entries (of one institution, in log order). */
export function feedBlock(entries: readonly BlockEntry[]): Buffer {
  let size = 0;
  for (const { type } of entries) size += 8 + 8 + 16 + 8 + 1 + type.length;
  const value = Buffer.allocUnsafe(size);
  let at = 0;
  for (const { commit, prepare, id, occurredAt, type } of entries) {
    putU64(value, at, commit);
    putU64(value, at + 8, prepare);
    value.write(id.replaceAll('-', ''), at + 16, 16, 'hex');
    value.writeDoubleBE(occurredAt, at + 32);
    value.writeUInt8(type.length, at + 40);
    value.write(type, at + 41, 'latin1');
    at += 41 + type.length;
  }
  return value;
}

export function decodeFeedBlock(value: Buffer): BlockEntry[] {
  const entries: BlockEntry[] = [];
  for (let at = 0; at < value.length; ) {
    const hex = value.toString('hex', at + 16, at + 32);
    const typeLength = value.readUInt8(at + 40);
    entries.push({
      commit: u64(value, at),
      prepare: u64(value, at + 8),
      id: `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`,
      occurredAt: value.readDoubleBE(at + 32),
      type: value.toString('latin1', at + 41, at + 41 + typeLength) as EventType,
    });
    at += 41 + typeLength;
  }
  return entries;
}

/** Entries (in log order) as blocks: each institution's in order, BLOCK_ENTRIES at most a block. */
export function feedBlocks<E extends BlockEntry & Pick<FeedEntry, 'institution'>>(entries: readonly E[]): Array<[institution: string, block: E[]]> {
  const byInstitution = new Map<string, E[]>();
  for (const entry of entries) {
    const own = byInstitution.get(entry.institution);
    if (own) own.push(entry);
    else byInstitution.set(entry.institution, [entry]);
  }
  const blocks: Array<[string, E[]]> = [];
  for (const [institution, own] of byInstitution) {
    for (let i = 0; i < own.length; i += BLOCK_ENTRIES) blocks.push([institution, own.slice(i, i + BLOCK_ENTRIES)]);
  }
  return blocks;
}
