/**
 * Query parsing for every parameter of every search endpoint: each name,
 * alias and range suffix is accepted with a valid value and refused with a
 * 400 naming the parameter as sent when the value has the wrong type.
 */
import t from 'tap';
import type { ParamDef } from '../src/query/resource.js';
import { keysOf, searchSchema } from '../src/query/schema.js';
import { resources } from '../src/resources/index.js';
import { startApp, type TestApp } from './helpers.js';

const valid: Record<ParamDef<unknown>['type'], string> = {
  text: 'Anything at all',
  uuid: '0D7C9A1E-2B3F-4C5D-8E6F-708192A3B4C5',
  timestamp: '2026-09-01T09:00:00.123456+02:00',
  date: '2026-09-01',
  time: '09:30:00.5',
  integer: '4',
  number: '2.75',
  choice: '1',
  boolean: 'true',
};

const invalid: Record<ParamDef<unknown>['type'], [string, (sent: string) => string] | undefined> = {
  text: undefined,
  uuid: ['0d7c9a1e', (p) => `Invalid UUID value for ${p}.`],
  timestamp: ['2026-09-01T09:61', (p) => `Invalid datetime format for ${p}.`],
  date: ['01/09/2026', (p) => `Invalid date format for ${p}.`],
  time: ['9.30', (p) => `Invalid time format for ${p}.`],
  integer: ['four', (p) => `Invalid integer value for ${p}.`],
  number: ['2,5', (p) => `Invalid number value for ${p}.`],
  choice: ['7', (p) => `Invalid value for ${p}.`],
  boolean: ['maybe', (p) => `Invalid boolean value for ${p}.`],
};

let app: TestApp;
t.before(async () => {
  app = await startApp({ fixtures: ['demo.ndjson'] });
});
t.teardown(() => app.close());

for (const def of Object.values(resources)) {
  // Where a resource's parameters are taken: its search endpoint, or its list.
  const endpoint = def.endpoints.search ? `/api/${def.path}/search/` : def.endpoints.filteredList ? `/api/${def.path}/` : undefined;
  if (endpoint === undefined) continue;
  t.test(endpoint, async (t) => {
    const schema = searchSchema(def as never);
    for (const param of def.params as readonly ParamDef<unknown>[]) {
      for (const { key, op } of keysOf(param)) {
        const ok = schema.safeParse({ [key]: valid[param.type] });
        t.ok(ok.success, `${key} accepts ${valid[param.type]}`);
        if (ok.success) {
          const [filter] = ok.data.filters;
          t.equal(filter?.param.name, param.name, `${key} is ${param.name}`);
          t.equal(filter?.op, op, `${key} is ${op}`);
        }
        const res = await app.get(`${endpoint}?${key}=${encodeURIComponent(valid[param.type])}`);
        t.equal(res.status, 200, `GET with ${key}`);

        const bad = invalid[param.type];
        if (bad) {
          const [value, message] = bad;
          const refused = await app.get(`${endpoint}?${key}=${encodeURIComponent(value)}`);
          t.equal(refused.status, 400, `${key}=${value}`);
          t.same(refused.body, { detail: message(key) });
        }
      }
    }
    for (const ordering of Object.keys(def.orderings)) {
      t.equal((await app.get(`${endpoint}?ordering=${ordering}`)).status, 200, `ordering=${ordering}`);
    }
  });
}

t.test('a value that only an object prototype knows is no valid value', async (t) => {
  for (const value of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
    const res = await app.get(`/api/profiles/search/?is_offline=${value}`);
    t.equal(res.status, 400, `is_offline=${value}`);
    t.same(res.body, { detail: 'Invalid boolean value for is_offline.' });
    t.equal((await app.get(`/api/shifts/search/?ordering=${value}`)).status, 400, `ordering=${value}`);
  }
});

t.test('errors are reported in declaration order: page, limit, the parameters, ordering', async (t) => {
  const res = await app.get('/api/shifts/search/?ordering=nope&spots=many&limit=0&date=never');
  t.equal(res.status, 400);
  t.same(res.body, { detail: 'Invalid limit: must be an integer from 1 to 100.' });
  // shift_date (alias date) is declared before spots.
  t.same((await app.get('/api/shifts/search/?ordering=nope&spots=many&date=never')).body, { detail: 'Invalid date format for date.' });
  t.same((await app.get('/api/shifts/search/?ordering=nope&spots=many')).body, { detail: 'Invalid integer value for spots.' });
  t.same((await app.get('/api/shifts/search/?ordering=nope')).body, {
    detail: `Invalid ordering "nope": use one of ${Object.keys(resources.shifts.orderings).join(', ')}.`,
  });
});

t.test('every documented shift parameter and alias is declared', async (t) => {
  const declared = new Set(resources.shifts.params.flatMap((p) => keysOf(p as ParamDef<unknown>).map((k) => k.key)));
  const documented = [
    'id', 'title', 'shift_title', 'description', 'shift_description',
    'created_at', 'created_date', 'created_on', 'shift_date', 'date', 'shift_start_at',
    'shift_start_time', 'start_time', 'shift_end_at', 'shift_end_time', 'end_time', 'spots',
    'opportunity.id', 'opportunity_id', 'opportunity.title', 'opportunity_title',
    'category.id', 'category_id', 'category.title', 'category_title',
  ];
  const ranged = ['created_at', 'created_date', 'created_on', 'shift_date', 'date', 'shift_start_at', 'shift_start_time', 'start_time', 'shift_end_at', 'shift_end_time', 'end_time', 'spots'];
  for (const name of documented) t.ok(declared.has(name), name);
  for (const name of ranged) for (const op of ['gt', 'gte', 'lt', 'lte']) t.ok(declared.has(`${name}.${op}`), `${name}.${op}`);
});

t.test('every documented opportunity parameter and alias is declared', async (t) => {
  const declared = new Set(resources.opportunities.params.flatMap((p) => keysOf(p as ParamDef<unknown>).map((k) => k.key)));
  for (const name of ['id', 'title', 'description', 'status', 'created_at', 'category.id', 'category_id', 'category.title', 'category_title']) {
    t.ok(declared.has(name), name);
  }
  for (const op of ['gt', 'gte', 'lt', 'lte']) t.ok(declared.has(`created_at.${op}`), `created_at.${op}`);
});
