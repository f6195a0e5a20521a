/**
 * The row test of a walk or a scan that reads many rows. Reading a
 * constraint's column at each row is a read at a random place of an array
 * of 4 MB (500,000 rows): mostly a cache miss. A constraint an index
 * answers as blocks (a range on its leading column, a set of codes) can be
 * marked first in a bitset over row numbers instead — its rows read in
 * index order, a bit each; for more than half the rows, the rows outside
 * its blocks, the bits then flipped — and tested as one bit (500,000 rows:
 * 62 KB, which stays in cache). Marked only when that costs less than the
 * reads it saves.
 */
import type { Identified } from '../readmodel/sorted-index.js';
import type { Table } from '../readmodel/table.js';
import type { Candidate, Check } from './candidates.js';
import { checkOf, type Constraint } from './constraints.js';
import { scratch } from './scratch.js';

/**
 * What marking a row costs, in rows a walk reads (a mark is a sequential read and a bit in cache; a walk's test, a
 * random read): a candidate is marked when its rows (or those outside it) times this are fewer than the rows read.
 */
const READS_PER_MARK = 1 / 8;

/**
 * The test of these constraints for a walk or scan expected to read `reads`
 * rows, whose rows already satisfy `known` (what the walk's own candidate
 * covers); `candidates` give the constraints' blocks. A candidate is marked
 * when every constraint it covers is one of these or known: its blocks are
 * then exactly the rows that satisfy them (candidates are complete for what
 * they cover: exact ones are counted from their blocks).
 */
export function rowTest(
  table: Pick<Table<Identified>, 'column' | 'indexLedBy' | 'rowCount'>,
  constraints: readonly Constraint[],
  candidates: readonly Candidate[],
  reads: number,
  known: ReadonlySet<Constraint> = new Set(),
): Check {
  const marked: Candidate[] = [];
  const covered = new Set<Constraint>();
  for (const c of constraints) {
    if (covered.has(c)) continue;
    const own = candidates
      .filter((k) => k.covers.has(c) && [...k.covers].every((x) => known.has(x) || constraints.includes(x)))
      .sort((a, b) => a.size - b.size)[0];
    if (own && Math.min(own.size, own.index.size - own.size) * READS_PER_MARK < reads) {
      marked.push(own);
      for (const x of own.covers) covered.add(x);
    }
  }
  if (marked.length === 0) return checkOf(table, constraints);
  const words = (table.rowCount >>> 5) + 1;
  const bits = scratch('bits', words).fill(0);
  const other = scratch('bits-next', words);
  marked.forEach((candidate, i) => mark(candidate, i === 0 ? bits : other.fill(0), i > 0 ? bits : undefined));
  const rest = constraints.filter((c) => !covered.has(c));
  if (rest.length === 0) return (row) => (bits[row >>> 5]! & (1 << (row & 31))) !== 0;
  const check = checkOf(table, rest);
  return (row) => (bits[row >>> 5]! & (1 << (row & 31))) !== 0 && check(row);
}

/** Set the bits of a candidate's rows (or, when they are most of its index, clear those of the others), then AND into `into` if given. */
function mark({ index, blocks, size }: Candidate, bits: Uint32Array, into: Uint32Array | undefined): void {
  const rows = index.order;
  const outside = size > index.size - size;
  const set = (from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const row = rows[i]!;
      bits[row >>> 5]! |= 1 << (row & 31);
    }
  };
  if (!outside) for (let b = 0; b < blocks.length; b += 2) set(blocks[b]!, blocks[b + 1]!);
  else {
    // The rows between and around the blocks, then every bit flipped (rows not in the index are never tested).
    let at = 0;
    for (let b = 0; b < blocks.length; b += 2) {
      set(at, blocks[b]!);
      at = blocks[b + 1]!;
    }
    set(at, index.size);
    for (let w = 0; w < bits.length; w++) bits[w] = ~bits[w]!;
  }
  if (into) for (let w = 0; w < into.length; w++) into[w]! &= bits[w]!;
}
