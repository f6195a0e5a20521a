/**
 * Event data packed ahead of its append, in the embedded log's own encoding: what lets an import's worker threads do
 * the packing that lmdb-js would otherwise do on the one thread that appends (at 1.77M events, 2.5 s of that thread's
 * time, and 2–3 s more to parse the events back out of the import's spool to hand them to it).
 *
 * lmdb-js writes the `events` database's values with msgpackr's records: an object is a record id and its values,
 * and the keys of each record id (its shape) are kept once, in the database's shared structures. Packed by a Packr
 * seeded with those structures, data of a known shape is the very bytes lmdb-js writes for it. A shape not among them
 * is what the import's one learning packer (on its main thread, in file order) adds, as lmdb-js would, and the
 * appends write the structures it learned before the events that use them (EmbeddedEventStore, `PackedData`).
 */
import { Packr, Unpackr } from 'msgpackr';

/** Shared structures, as msgpackr keeps them: the keys of record id 0x40 + i, in order. */
export type Shapes = readonly (readonly string[])[];

/** The keys of a stored event, in the order the embedded log writes them: its data last. */
export const ENVELOPE_KEYS = ['id', 'type', 'stream', 'revision', 'data'] as const;

/**
 * An event's data packed over `shapes`: every record id in `bytes` is one of theirs. A store that holds those shapes
 * (or fewer of them, and takes the rest) writes the bytes as they are; one that cannot unpacks them.
 */
export class PackedData {
  constructor(
    readonly bytes: Uint8Array,
    readonly shapes: Shapes,
  ) {}
}

/** Plain arrays (msgpackr marks its own with properties a structured clone or a comparison should not see). */
export const plainShapes = (shapes: Shapes): string[][] => shapes.map((keys) => [...keys]);

/** Whether two shapes have the same keys in the same order. */
export const sameKeys = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((key, k) => key === b[k]);

/** Whether `a` is `b` or its beginning. */
export const isPrefixOf = (a: Shapes, b: Shapes): boolean => a.length <= b.length && a.every((keys, i) => sameKeys(keys, b[i]!));

/**
 * Packs data, sharing each shape it has not met (as lmdb-js does: up to msgpackr's 32 shared structures, then a
 * record defined within each value that needs it): the import's one packer that learns, on its main thread, so that
 * shapes get their ids in one order. Knows the stored event's shape from the start.
 */
export class LearningPacker {
  private readonly packr: Packr;
  /** msgpackr's structures: the Packr adds each shape it shares to this array. */
  private readonly structures: string[][];
  private known: number;

  constructor(shapes: Shapes) {
    this.structures = plainShapes(shapes);
    this.packr = new Packr({ structures: this.structures });
    this.packr.pack(Object.fromEntries(ENVELOPE_KEYS.map((key) => [key, null])));
    this.known = this.structures.length;
  }

  /** `data`'s bytes (a copy of them); bound, to be handed on as a PackData. */
  readonly pack = (data: unknown): Uint8Array => this.packr.pack(data).slice();

  /** Whether it has learned a shape since the last call. */
  learned(): boolean {
    const now = this.shapes.length;
    const more = now > this.known;
    this.known = now;
    return more;
  }

  /**
   * `bytes` (packed by it, or over any of its shapes) as data again. Not by its own Packr: unpacking a value that
   * defines its record within itself (past the 32 shared shapes) adds that record to the Packr's structures, and the
   * log would then be given 33 shared shapes (the next import's packer refused them).
   */
  unpack(bytes: Uint8Array): unknown {
    return unpacked(new PackedData(bytes, this.structures));
  }

  get shapes(): Shapes {
    return this.structures;
  }
}

/**
 * Packs data over the shapes it is given, and no other: data of a shape it does not know (while msgpackr would share
 * it) comes out as undefined, for the learning packer to pack. An import's worker thread's packer.
 */
export class KnownShapesPacker {
  private packr!: Packr;
  private unknown = false;

  constructor(shapes: Shapes) {
    this.know(shapes);
  }

  /** Know these shapes from now on (the learning packer's, which begin with the ones known before). */
  know(shapes: Shapes): void {
    this.packr = new Packr({
      structures: plainShapes(shapes),
      shouldShareStructure: () => {
        this.unknown = true;
        return false;
      },
    });
  }

  /** `data`'s bytes (a view of msgpackr's buffer, good until the next pack), or undefined. */
  pack(data: unknown): Uint8Array | undefined {
    this.unknown = false;
    const bytes = this.packr.pack(data);
    return this.unknown ? undefined : bytes;
  }
}

/** Unpackers by the shapes they were made for, and how many of them there were then. */
const unpackers = new WeakMap<Shapes, { known: number; unpackr: Unpackr }>();

/**
 * Packed data as data again (a store that cannot write it as it is). The unpacker must know every shape: msgpackr
 * reads a record id it does not know as a small integer.
 */
export function unpacked(data: PackedData): unknown {
  let made = unpackers.get(data.shapes);
  if (made?.known !== data.shapes.length) unpackers.set(data.shapes, (made = { known: data.shapes.length, unpackr: new Unpackr({ structures: plainShapes(data.shapes) }) }));
  return made.unpackr.unpack(data.bytes);
}
