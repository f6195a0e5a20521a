/**
 * Seeded pseudo-random numbers for generated data (the demo fixture, the
 * benchmark): the same seed gives the same data on every run.
 */

/** Numbers in [0, 1) from a 32-bit seed (mulberry32). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A UUID in the version 4 layout drawn from `random`, with this variant digit. */
export function seededUuid(random: () => number, variant: '8' | '9' | 'a' | 'b'): string {
  return Array.from({ length: 32 }, (_, i) => (i === 12 ? '4' : i === 16 ? variant : Math.floor(random() * 16).toString(16)))
    .join('')
    .replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5');
}
