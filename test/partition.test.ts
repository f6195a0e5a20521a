/**
 * Spreading institutions over replay workers: every institution to exactly
 * one worker, the same answer whatever order the weights come in, and
 * loads within the longest-processing-time rule's bound.
 */
import fc from 'fast-check';
import t from 'tap';
import { assignInstitutions, ownedBy, workerOf } from '../src/readmodel/partition.js';

const weightsArb = fc.uniqueArray(fc.tuple(fc.uuid(), fc.integer({ min: 1, max: 5000 })), {
  selector: ([id]) => id,
  maxLength: 40,
});

t.test('each institution goes to one worker; loads stay within the LPT bound', async (t) => {
  fc.assert(
    fc.property(weightsArb, fc.integer({ min: 1, max: 6 }), (entries, workers) => {
      const weights = new Map(entries);
      const assignment = assignInstitutions(weights, workers);
      const loads = new Array<number>(workers).fill(0);
      for (const [id, weight] of entries) {
        const worker = workerOf(id, assignment, workers);
        if (!(worker >= 0 && worker < workers && assignment.get(id) === worker)) return false;
        loads[worker]! += weight;
      }
      const total = entries.reduce((sum, [, w]) => sum + w, 0);
      const heaviest = Math.max(0, ...entries.map(([, w]) => w));
      // Greedy to the least loaded: no worker ends more than one institution above the average.
      return Math.max(...loads) <= total / workers + heaviest;
    }),
  );
});

t.test('the same weights in any order give the same assignment', async (t) => {
  fc.assert(
    fc.property(weightsArb.chain((entries) => fc.tuple(fc.constant(entries), fc.shuffledSubarray(entries, { minLength: entries.length }))), fc.integer({ min: 1, max: 6 }), ([entries, shuffled], workers) => {
      const a = assignInstitutions(new Map(entries), workers);
      const b = assignInstitutions(new Map(shuffled), workers);
      return entries.every(([id]) => a.get(id) === b.get(id));
    }),
  );
});

t.test('a half-of-everything institution gets a worker to itself', async (t) => {
  const weights = new Map([['big', 500], ...Array.from({ length: 9 }, (_, i) => [`small-${i}`, 55] as [string, number])]);
  const assignment = assignInstitutions(weights, 2);
  const bigWorker = assignment.get('big')!;
  t.ok([...assignment].every(([id, w]) => id === 'big' || w !== bigWorker), 'the nine others share the other worker');
});

t.test('an institution the sample missed goes to a worker by its id, the same every time', async (t) => {
  const assignment = assignInstitutions(new Map([['known', 10]]), 3);
  fc.assert(
    fc.property(fc.uuid(), (id) => {
      const worker = workerOf(id, assignment, 3);
      return worker >= 0 && worker < 3 && Number.isInteger(worker) && workerOf(id, assignment, 3) === worker;
    }),
  );
  const spread = new Set(Array.from({ length: 60 }, (_, i) => workerOf(`institution-${i}`, assignment, 3)));
  t.equal(spread.size, 3, 'ids spread over every worker');
});

t.test('over a stream of events in runs, exactly one worker owns each event, the one workerOf names', async (t) => {
  const ids = ['a', 'b', 'c', 'd', 'e'];
  fc.assert(
    fc.property(fc.array(fc.constantFrom(...ids), { maxLength: 200 }), fc.integer({ min: 1, max: 4 }), (stream, workers) => {
      const assignment = assignInstitutions(new Map([['a', 3], ['b', 1]]), workers);
      const owners = Array.from({ length: workers }, (_, index) => ownedBy(index, assignment, workers));
      return stream.every((id) => {
        const owning = owners.map((owns) => owns(id));
        return owning.filter(Boolean).length === 1 && owning[workerOf(id, assignment, workers)] === true;
      });
    }),
  );
});
