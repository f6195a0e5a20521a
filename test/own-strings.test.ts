/**
 * Strings kept from values LMDB decoded (src/own-strings.ts): a copy is the
 * same string, and holds only itself, where a string as decoded holds the
 * whole value it came from. The read model's records and the sites
 * registry keep copies.
 *
 * Each case decodes values padded with text nobody keeps and measures what
 * the heap holds once what is kept is kept; each also keeps the strings as
 * decoded, which must hold the padding (else the case would prove nothing).
 */
import { randomUUID } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { open } from 'lmdb';
import t from 'tap';
import { put } from '../projections/projection.js';
import type { SiteRecord } from '../projections/records.js';
import { emptyRegistry, evolve } from '../src/commands/sites.js';
import type { DomainEvent } from '../src/events/catalog.js';
import { ReadModel } from '../src/readmodel/model.js';
import { ownCopy } from '../src/own-strings.js';
import { tableDefs } from '../src/resources/index.js';
import { tempDir } from './helpers.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Values decoded, each with this much text nobody keeps, in short strings (as an event's are: a long one is decoded on its own). */
const VALUES = 2_000;
const PAD = 4_096;
const padding = Array.from({ length: PAD / 64 }, (_, i) => `${i}`.padEnd(64, '.'));

/** Bytes the heap holds, per value, once `keep` has kept what it keeps of the values `make` decoded (and they are gone). */
async function heldBy<T>(make: () => T[], keep: (value: T) => unknown): Promise<number> {
  // (What an earlier case made may still be held until its promise settles: let that happen first.)
  await new Promise((resolve) => setImmediate(resolve));
  gc();
  gc();
  const before = process.memoryUsage().heapUsed;
  let values: T[] | undefined = make();
  const kept = values.map(keep);
  values = undefined;
  gc();
  gc();
  const grown = process.memoryUsage().heapUsed - before;
  // (What was kept is held until here.)
  if (kept.length !== VALUES) throw new Error(`${kept.length} values decoded, not ${VALUES}`);
  return grown / VALUES;
}

/** `make(i)` for each i, written to LMDB with padding, and read back. */
function decoded<T extends object>(make: (i: number) => T): T[] {
  const { dir, remove } = tempDir('vm-own-strings-');
  const db = open({ path: dir, compression: false });
  for (let i = 0; i < VALUES; i++) db.putSync(i, { ...make(i), padding });
  const values = Array.from(db.getRange({}), ({ value }) => value as T);
  db.close();
  remove();
  return values;
}

t.test('a copy is the same string, whatever it holds (lone surrogates too)', async (t) => {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 80 }), (units) => {
      const value = String.fromCharCode(...units);
      return ownCopy(value) === value;
    }),
  );
  t.equal(ownCopy('caf\u00e9 \ud83d\ude00 \ud800'), 'caf\u00e9 \ud83d\ude00 \ud800');
});

t.test('an id copied out of a decoded value holds only itself; as decoded, it holds the whole value', async (t) => {
  const ids = () => decoded(() => ({ id: randomUUID(), title: 'a title' })).map((v) => v.id);
  const asDecoded = await heldBy(ids, (id) => id);
  const copied = await heldBy(ids, ownCopy);
  t.ok(asDecoded > PAD * 0.8, `as decoded: ${Math.round(asDecoded)} bytes an id`);
  t.ok(copied < 400, `copied: ${Math.round(copied)} bytes an id`);
});

t.test('the read model keeps copies of the strings of the records changes make (nested ones too)', async (t) => {
  const institution_id = randomUUID();
  const sites = () =>
    decoded((i) => ({
      site: { id: randomUUID(), institution_id, title: `Site ${i}`, address: `${i} Main St`, user_ids: [randomUUID()], created_at: i, updated_at: i } satisfies SiteRecord,
    }));
  const keptBy = (model: ReadModel) => (value: { site: SiteRecord }) => {
    model.apply(put('site', value.site));
    return model;
  };
  const asDecoded = await heldBy(sites, keptBy(new ReadModel(tableDefs, Date.now, false)));
  const model = new ReadModel(tableDefs);
  let first: SiteRecord | undefined;
  const copied = await heldBy(sites, (value) => {
    first ??= structuredClone(value.site);
    return keptBy(model)(value);
  });
  t.ok(asDecoded > PAD * 0.8, `a model that does not copy: ${Math.round(asDecoded)} bytes a site`);
  t.ok(copied < 1_500, `the model: ${Math.round(copied)} bytes a site`);
  t.same(model.get('site', first!.id), first, 'what it keeps is the record');
});

t.test('the sites registry keeps copies of what it folds: sites, titles, assignments, requests', async (t) => {
  const institution_id = randomUUID();
  const occurred_at = new Date().toISOString();
  const events = () =>
    decoded((i) => {
      const site_id = randomUUID();
      return {
        created: { type: 'SiteCreated', data: { institution_id, occurred_at, site_id, title: `Site ${i}` } },
        assigned: { type: 'UserAssignedToSite', data: { institution_id, occurred_at, site_id, user_id: randomUUID() } },
        handled: {
          type: 'SiteRequestHandled',
          data: { institution_id, occurred_at, idempotency_key: `key-${randomUUID()}`, request_sha256: 'ab'.repeat(32), status: 201, response: { count: 1, results: [{ id: site_id }] } },
        },
      } as const;
    });
  const fold = (state = emptyRegistry()) => (value: { created: unknown; assigned: unknown; handled: unknown }) => {
    for (const event of [value.created, value.assigned, value.handled]) evolve(state, event as DomainEvent);
    return state;
  };
  // As decoded: the state keeps the events' own strings and objects (what evolve did before it copied).
  const asDecoded = await heldBy(events, (value) => [value.created.data.site_id, value.assigned.data.user_id, value.handled.data.idempotency_key, value.handled.data.response]);
  const state = emptyRegistry();
  const copied = await heldBy(events, fold(state));
  t.ok(asDecoded > PAD * 0.8, `kept as decoded: ${Math.round(asDecoded)} bytes a request`);
  t.ok(copied < 2_000, `the registry: ${Math.round(copied)} bytes a request`);
  t.equal(state.sites.size, VALUES);
  t.equal(state.requests.size, VALUES);
});
