/**
 * Which replay worker folds which institution: the institutions, heaviest
 * first, each to the worker with the least weight so far (the longest-
 * processing-time rule); an institution not weighed goes by a hash of its
 * id. Every worker computes the same answer from the same weights.
 */

export type Assignment = ReadonlyMap<string, number>;

/** Institutions with their weights (events seen in a sample) spread over `workers`. */
export function assignInstitutions(weights: ReadonlyMap<string, number>, workers: number): Assignment {
  const load = new Array<number>(workers).fill(0);
  const assignment = new Map<string, number>();
  const heaviestFirst = [...weights].sort(([a, x], [b, y]) => y - x || (a < b ? -1 : a > b ? 1 : 0));
  for (const [institution, weight] of heaviestFirst) {
    let lightest = 0;
    for (let w = 1; w < workers; w++) if (load[w]! < load[lightest]!) lightest = w;
    assignment.set(institution, lightest);
    load[lightest]! += weight;
  }
  return assignment;
}

/** The worker folding this institution. */
export function workerOf(institution: string, assignment: Assignment, workers: number): number {
  const assigned = assignment.get(institution);
  if (assigned !== undefined) return assigned;
  let hash = 0;
  for (let i = 0; i < institution.length; i++) hash = (Math.imul(hash, 31) + institution.charCodeAt(i)) | 0;
  return (hash >>> 0) % workers;
}

/**
 * Whether an institution is folded by worker `index`: events come in runs
 * of one institution, so the answer is reused while the institution stays
 * the same.
 */
export function ownedBy(index: number, assignment: Assignment, workers: number): (institution: string) => boolean {
  let last: string | undefined;
  let owned = false;
  return (institution) => {
    if (institution !== last) {
      last = institution;
      owned = workerOf(institution, assignment, workers) === index;
    }
    return owned;
  };
}
