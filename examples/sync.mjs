#!/usr/bin/env node
/**
 * Keep a local copy of an institution's data up to date from the change
 * feed — an example client, with no dependencies (Node 20's fetch).
 *
 *   node examples/sync.mjs [--base http://127.0.0.1:3000] [--key <API key>] [--file copy.json] [--every 5]
 *
 * The copy is every record of every resource as the API's lists show it,
 * by id, with the feed cursor it reflects; it is written to --file after
 * each pass (and read back at start, so a restart goes on from its cursor).
 * Each pass reads the feed after the cursor, a page at a time, and for the
 * records a page names fetches each once as it is now (or drops it, when it
 * is gone). A change also shows in records that nest the changed one (a
 * profile's name in its reservations) and in figures of the records it
 * points to (a reservation counts in its shift's spots and its volunteer's
 * hours): those are found in the copy by their ids and fetched again too —
 * also when a record is found gone before its own change is read (the
 * server is ahead of the page being read).
 * An institution's change (its share URLs) and a custom field's (profiles
 * show their names) fetch every record of those resources again.
 *
 * Records are fetched one by one, never by listing a resource again: pages
 * of a list read while records are deleted can skip one (the rows after a
 * deleted one move up a place), and nothing in the feed would bring it
 * back. One request per record is slow where a change shows in many (a
 * category renamed in a large institution's shifts); such a client would
 * rather copy the lists again from scratch, then follow the feed from a
 * cursor taken before it started.
 */

/** Where a record is fetched as lists show it: the search by id, or (sites) the retrieve. */
const SEARCHED = ['shifts', 'opportunities', 'profiles', 'reservations', 'form-submissions', 'sequences', 'user-sequences'];
const RESOURCES = [...SEARCHED, 'sites'];
/** Resources without a route whose change shows in every record of others: those are fetched again. */
const WHOLE = { institutions: ['shifts', 'opportunities'], 'custom-fields': ['profiles'] };
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/** A client of the API: GET with the key, retrying after a 429 or 503 as Retry-After says. */
export function client(base, key) {
  return async function get(path) {
    for (let attempt = 0; ; attempt++) {
      const res = await fetch(new URL(path, base), { headers: { 'api-key': key } });
      if ((res.status === 429 || res.status === 503) && attempt < 10) {
        const wait = Number(res.headers.get('retry-after') ?? '1');
        await new Promise((resolve) => setTimeout(resolve, Math.min(wait, 60) * 1000));
        continue;
      }
      if (res.status === 404) return undefined;
      if (!res.ok) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`);
      return res.json();
    }
  };
}

/** An empty copy. */
export function emptyCopy() {
  return { cursor: null, records: Object.fromEntries(RESOURCES.map((r) => [r, {}])) };
}

/** One record as the lists show it, or undefined when it is gone (or not listed: a removed shift). */
async function fetchRecord(get, resource, id) {
  if (resource === 'sites') return get(`/api/sites/${id}/`);
  const body = await get(`/api/${resource}/search/?id=${id}`);
  return body?.results[0];
}

/** The resource of the copy holding this id, if any. */
function resourceOf(copy, id) {
  return RESOURCES.find((resource) => id in copy.records[resource]);
}

/** The keys ("resource id") of the records of the copy that a record points to: the ids in its JSON the copy holds. */
function pointsTo(copy, record) {
  const keys = [];
  for (const id of JSON.stringify(record).match(UUID) ?? []) {
    const resource = resourceOf(copy, id);
    if (resource) keys.push(`${resource} ${id}`);
  }
  return keys;
}

/**
 * Fetch these records again, and put them in the copy (or take them out).
 * A record found gone takes what it pointed to along: their figures counted
 * it (a reservation, its volunteer's hours), and its own change may come in
 * a later page, when the copy no longer knows what it pointed to.
 */
async function refresh(get, copy, keys) {
  const queue = [...keys];
  const done = new Set();
  while (queue.length > 0) {
    const key = queue.shift();
    if (done.has(key)) continue;
    done.add(key);
    const [resource, id] = key.split(' ');
    const record = await fetchRecord(get, resource, id);
    const before = copy.records[resource][id];
    if (record) copy.records[resource][id] = record;
    else delete copy.records[resource][id];
    if (!record && before) queue.push(...pointsTo(copy, before));
  }
}

/**
 * Read the feed after the copy's cursor to its end, bringing the copy up
 * to date; how many changes were read.
 */
export async function syncOnce(get, copy, pageSize = 1000) {
  let read = 0;
  for (;;) {
    const after = copy.cursor ? `&after=${copy.cursor}` : '';
    const page = await get(`/api/changes/?limit=${pageSize}${after}`);
    if (page.results.length === 0) return read;
    read += page.results.length;
    // The records the page names, each once (a category has no route: it shows where it is nested, found below by its id).
    const changed = new Set();
    const wanted = new Set();
    for (const change of page.results) {
      if (!(change.resource in WHOLE)) changed.add(`${change.resource} ${change.id}`);
      else for (const resource of WHOLE[change.resource]) for (const id of Object.keys(copy.records[resource])) wanted.add(`${resource} ${id}`);
    }
    // The changed records themselves, then what they point to (their figures count them).
    const own = [...changed].filter((key) => RESOURCES.includes(key.split(' ')[0]));
    await refresh(get, copy, own);
    for (const key of own) {
      const [resource, id] = key.split(' ');
      const record = copy.records[resource][id];
      if (record) for (const pointed of pointsTo(copy, record)) wanted.add(pointed);
    }
    // The records that nest a changed one (its id in their JSON).
    const ids = new Set([...changed].map((key) => key.split(' ')[1]));
    for (const resource of RESOURCES) {
      for (const [id, record] of Object.entries(copy.records[resource])) {
        if (ids.has(id)) continue;
        const text = JSON.stringify(record);
        for (const changedId of ids) {
          if (text.includes(changedId)) {
            wanted.add(`${resource} ${id}`);
            break;
          }
        }
      }
    }
    for (const key of own) wanted.delete(key);
    await refresh(get, copy, wanted);
    copy.cursor = page.next_cursor;
  }
}

async function main() {
  const { parseArgs } = await import('node:util');
  const { readFileSync, writeFileSync, renameSync, existsSync } = await import('node:fs');
  const { values } = parseArgs({
    options: {
      base: { type: 'string', default: 'http://127.0.0.1:3000' },
      key: { type: 'string', default: process.env.API_KEY ?? 'vm_demo_riverside_7Qm2x9KfLp4sT8wZ' },
      file: { type: 'string', default: 'copy.json' },
      every: { type: 'string', default: '5' },
    },
  });
  const get = client(values.base, values.key);
  const copy = existsSync(values.file) ? JSON.parse(readFileSync(values.file, 'utf8')) : emptyCopy();
  for (;;) {
    const read = await syncOnce(get, copy);
    if (read > 0) {
      // Written whole, then renamed: a crash leaves the last copy.
      writeFileSync(`${values.file}.tmp`, JSON.stringify(copy));
      renameSync(`${values.file}.tmp`, values.file);
      const counts = RESOURCES.map((r) => `${Object.keys(copy.records[r]).length} ${r}`).join(', ');
      console.log(`${new Date().toISOString()} ${read} changes read; the copy holds ${counts}`);
    }
    await new Promise((resolve) => setTimeout(resolve, Number(values.every) * 1000));
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
