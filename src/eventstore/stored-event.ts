/**
 * An event as the embedded log stores it (the `events` database's value), made from its parts without lmdb-js:
 * msgpackr's record of the stored event's shape (ENVELOPE_KEYS: id, type, stream, revision, then the data as packed
 * ahead, packed-data.ts). The store writes these bytes for data packed ahead of its append; an import's preparing
 * thread (append-preparer.ts) makes them for a whole chunk while the import's thread writes the chunk before.
 */
import { ENVELOPE_KEYS, sameKeys, type Shapes } from './packed-data.js';

/** msgpackr's one-byte record ids (0x40 + i) cover the 32 shared structures lmdb-js keeps. */
export const MAX_SHARED_SHAPES = 32;

/** The record id of the stored event's shape among `shapes` (those a log holds, or will once given them); undefined past the shared ones. */
export function envelopeIdOf(shapes: Shapes): number | undefined {
  const index = shapes.findIndex((keys) => sameKeys(keys, ENVELOPE_KEYS));
  return index >= 0 && index < MAX_SHARED_SHAPES ? 0x40 + index : undefined;
}

/**
 * Writes the stored event at `out[at]` (record id `envelope`), returning where it ends; -1 when it is not one these
 * bytes can hold (an id, type or stream not ASCII or 256 characters long, a revision past 32 bits), or `out` is too
 * short (`storedEventMost` tells how long it must be).
 */
export function writeStoredEvent(out: Uint8Array, at: number, envelope: number, id: string, type: string, stream: string, revision: number, data: Uint8Array): number {
  if (out.length - at < storedEventMost(data.length)) return -1;
  out[at++] = envelope;
  at = writeShortAscii(out, at, id);
  at = writeShortAscii(out, at, type);
  at = writeShortAscii(out, at, stream);
  at = writeUint(out, at, revision);
  if (at < 0) return -1;
  out.set(data, at);
  return at + data.length;
}

/** The most bytes a stored event with `dataBytes` of data takes (`writeStoredEvent`). */
export const storedEventMost = (dataBytes: number): number => 1 + 3 * 257 + 5 + dataBytes;

/**
 * `text` as msgpackr writes a string, when it is ASCII and shorter than 256 (a fixstr or a str8: an event's id,
 * type and stream are); else -1. Returns where it ends (-1 stays -1).
 */
function writeShortAscii(out: Uint8Array, at: number, text: string): number {
  const n = text.length;
  if (at < 0 || n >= 256) return -1;
  if (n < 32) out[at++] = 0xa0 | n;
  else {
    out[at++] = 0xd9;
    out[at++] = n;
  }
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x80) return -1;
    out[at++] = c;
  }
  return at;
}

/**
 * A revision as msgpackr writes an unsigned integer where record ids take 0x40–0x7f (lmdb-js's records): one byte
 * below 0x40, then uint8, uint16, uint32; -1 past that. Returns where it ends (-1 stays -1).
 */
function writeUint(out: Uint8Array, at: number, n: number): number {
  if (at < 0 || n > 0xffffffff) return -1;
  if (n < 0x40) out[at++] = n;
  else if (n < 0x100) {
    out[at++] = 0xcc;
    out[at++] = n;
  } else if (n < 0x10000) {
    out[at++] = 0xcd;
    out[at++] = n >> 8;
    out[at++] = n & 0xff;
  } else {
    out[at++] = 0xce;
    out[at++] = n >>> 24;
    out[at++] = (n >> 16) & 0xff;
    out[at++] = (n >> 8) & 0xff;
    out[at++] = n & 0xff;
  }
  return at;
}

