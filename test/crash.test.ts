/**
 * Crashes: `serve` (or `rebuild`) killed with SIGKILL at a random moment —
 * while another process imports into the same DATA_DIR, while sites POSTs
 * are answered, during a rebuild, during the journal fold at start-up —
 * then started again. Every write that was answered 2xx is there, and every
 * page of every list and of the change feed, for both institutions, is
 * byte for byte what a fresh rebuild of a copy of the log answers.
 *
 * CRASH_ROUNDS (5 in CI; `CRASH_ROUNDS=50 npx tap --timeout=2400 test/crash.test.ts` is the
 * long form) and CRASH_SEED (random when unset, printed) choose the rounds.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import t from 'tap';
import { DEMO_KEY, fixturePath, HARBOR_KEY, ROOT, tempDir } from './helpers.js';

const run = promisify(execFile);
const CLI = join(ROOT, 'dist', 'src', 'cli', 'main.js');
const ROUNDS = Number(process.env.CRASH_ROUNDS ?? 5);
const SEED = Number(process.env.CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31));
const RIVERSIDE = 'bf802b36-047d-4718-ad5b-ae9ed495b23f';
const KEYS = [DEMO_KEY, HARBOR_KEY];
const LISTS = ['shifts', 'opportunities', 'sequences', 'profiles', 'form-submissions', 'reservations', 'user-sequences', 'sites'];
/** Every process sees the same base URL (the lists' next/previous links) and folds a journal of 1,000 changes at start-up. */
const ENV = { PUBLIC_BASE_URL: 'http://vm.test', RATE_LIMIT_MAX: '0', JOURNAL_FOLD_FROM: '1000', LOG_LEVEL: 'info' };

type Scenario = 'import' | 'posts' | 'rebuild' | 'fold';
const SCENARIOS: Scenario[] = ['import', 'posts', 'rebuild', 'fold'];

/** A small seeded generator (mulberry32). */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Process {
  child: ChildProcess;
  lines: string[];
  exited: Promise<number | null>;
  /** The URL once it listens. */
  url: Promise<string>;
}

function start(dir: string, ...args: string[]): Process {
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...ENV, DATA_DIR: dir, PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      lines.push(line);
      const m = /"url":"(http:\/\/[^"]+)"/.exec(line);
      if (m) resolve(m[1]!);
    });
    createInterface({ input: child.stderr! }).on('line', (line) => lines.push(line));
    void exited.then((code) => reject(new Error(`${args[0]} exited with ${code} before listening:\n${lines.join('\n')}`)));
  });
  url.catch(() => undefined);
  return { child, lines, exited, url };
}

async function kill(p: Process): Promise<boolean> {
  const running = p.child.exitCode === null && p.child.signalCode === null;
  p.child.kill('SIGKILL');
  await p.exited;
  return running;
}

/** Serve over `dir` until ready (/readyz 200). */
async function serveReady(dir: string): Promise<{ process: Process; base: string }> {
  const process = start(dir, 'serve');
  const base = await process.url;
  for (const until = Date.now() + 60_000; Date.now() < until; await sleep(25)) {
    if ((await fetch(`${base}/readyz`)).status === 200) return { process, base };
  }
  throw new Error(`not ready after 60 s:\n${process.lines.join('\n')}`);
}

async function stop(p: Process): Promise<void> {
  p.child.kill('SIGTERM');
  const code = await p.exited;
  if (code !== 0) throw new Error(`serve exited with ${code} on SIGTERM:\n${p.lines.join('\n')}`);
}

/** Every page of every list, and the whole change feed, for both institutions. */
async function everyList(base: string): Promise<string[]> {
  const out: string[] = [];
  for (const key of KEYS) {
    for (const list of LISTS) {
      for (let page = 1; ; page++) {
        const res = await fetch(`${base}/api/${list}/?limit=100&page=${page}`, { headers: { 'api-key': key } });
        const text = await res.text();
        out.push(`${list} ${page} ${res.status} ${text}`);
        if (res.status !== 200 || JSON.parse(text).next === null) break;
      }
    }
    // No change lost or repeated by a crash: the feed, cursors and all.
    for (let after = ''; ; ) {
      const res = await fetch(`${base}/api/changes/?limit=1000${after}`, { headers: { 'api-key': key } });
      const text = await res.text();
      out.push(`changes ${after} ${res.status} ${text}`);
      const body = JSON.parse(text) as { results: unknown[]; next_cursor: string };
      if (res.status !== 200 || body.results.length === 0) break;
      after = `&after=${body.next_cursor}`;
    }
  }
  return out;
}

const post = (base: string, path: string, body: unknown) =>
  fetch(`${base}/api/sites/${path}/`, { method: 'POST', headers: { 'api-key': DEMO_KEY, 'content-type': 'application/json' }, body: JSON.stringify(body) });

t.test(`SIGKILL at random moments, ${ROUNDS} rounds (seed ${SEED})`, async (t) => {
  t.comment(`CRASH_SEED=${SEED} CRASH_ROUNDS=${ROUNDS}`);
  const tmp = tempDir('vm-crash-');
  t.teardown(tmp.remove);
  const dir = join(tmp.dir, 'data');
  await run(process.execPath, [CLI, 'import', fixturePath('demo.ndjson')], { env: { ...process.env, ...ENV, DATA_DIR: dir } });
  const next = random(SEED);
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!;

  // Writes answered 2xx: sites by id and title, and (site, profile) assignments.
  const sites = new Map<string, string>();
  const assignments: Array<{ site: string; user: string }> = [];
  // How long a rebuild and a start-up take here: the moments to kill at are drawn from them.
  let began = performance.now();
  await run(process.execPath, [CLI, 'rebuild'], { env: { ...process.env, ...ENV, DATA_DIR: dir } });
  const rebuildMs = performance.now() - began;
  began = performance.now();
  const first = await serveReady(dir);
  const readyMs = performance.now() - began;
  t.comment(`a rebuild takes ${Math.round(rebuildMs)} ms, a start-up until ready ${Math.round(readyMs)} ms`);
  const profiles = (((await (await fetch(`${first.base}/api/profiles/?limit=100`, { headers: { 'api-key': DEMO_KEY } })).json()) as { results: Array<{ id: string }> }).results).map((p) => p.id);
  await stop(first.process);

  const hits: Record<string, number> = {};
  const note = (what: string) => (hits[what] = (hits[what] ?? 0) + 1);
  let foldPending = false;

  /** An import file of `count` new sites (each third assigned a volunteer, if `assign`), noted as expected. */
  const siteFile = (name: string, count: number, occurred_at: string, assign: boolean): string => {
    const lines: string[] = [];
    for (let i = 0; i < count; i++) {
      const site = randomUUID();
      const title = `${name} ${i}`;
      lines.push(JSON.stringify({ type: 'SiteCreated', data: { institution_id: RIVERSIDE, occurred_at, site_id: site, title } }));
      sites.set(site, title);
      if (assign && i % 3 === 0) {
        const user = pick(profiles);
        lines.push(JSON.stringify({ type: 'UserAssignedToSite', data: { institution_id: RIVERSIDE, occurred_at, site_id: site, user_id: user } }));
        assignments.push({ site, user });
      }
    }
    const file = join(tmp.dir, `${name}.ndjson`);
    writeFileSync(file, lines.join('\n') + '\n');
    return file;
  };

  for (let round = 0; round < ROUNDS; round++) {
    const scenario = round < SCENARIOS.length ? SCENARIOS[round]! : pick(SCENARIOS);
    const delay = Math.floor(next() * (scenario === 'rebuild' ? rebuildMs : scenario === 'fold' ? 1.5 * readyMs : 1500));
    if (scenario === 'import') {
      // Another process imports sites (and assignments) while serve is killed.
      const served = await serveReady(dir);
      const file = siteFile(`import-${round}`, 1000, '2026-11-02T10:00:00Z', true);
      const importing = run(process.execPath, [CLI, 'import', file], { env: { ...process.env, ...ENV, DATA_DIR: dir } });
      await sleep(delay);
      note((await kill(served.process)) ? 'import: serve killed' : 'import: serve had exited');
      await importing; // it must finish (exit 0) whatever became of serve
    } else if (scenario === 'posts') {
      const served = await serveReady(dir);
      let stopped = false;
      const known = [...sites.entries()];
      const writer = async (w: number) => {
        for (let n = 0; !stopped; n++) {
          try {
            if (known.length > 0 && next() < 0.4) {
              const [site] = pick(known);
              const user = pick(profiles);
              const res = await post(served.base, 'assign', { site_ids: [site], user_ids: [user] });
              if (res.status === 200) assignments.push({ site, user });
              else if (res.status !== 503) throw new Error(`assign: ${res.status} ${await res.text()}`);
            } else {
              const titles = Array.from({ length: 1 + Math.floor(next() * 5) }, (_, i) => `Posted ${round}.${w}.${n}.${i}`);
              const res = await post(served.base, 'bulk-create', { sites: titles.map((title) => ({ title })) });
              if (res.status === 201) {
                for (const s of ((await res.json()) as { results: Array<{ id: string; title: string }> }).results) sites.set(s.id, s.title);
              } else if (res.status !== 503) throw new Error(`bulk-create: ${res.status} ${await res.text()}`);
            }
          } catch (error) {
            // A request on its way when the process died has no answer: it may or may not have been applied.
            if (!stopped && !(error instanceof TypeError)) throw error;
            if (!stopped) await sleep(5);
          }
        }
      };
      const writers = Promise.all([0, 1, 2, 3].map(writer));
      await sleep(delay);
      note((await kill(served.process)) ? 'posts: serve killed' : 'posts: serve had exited');
      stopped = true;
      await writers;
    } else if (scenario === 'rebuild') {
      const rebuilding = start(dir, 'rebuild');
      await sleep(delay);
      note((await kill(rebuilding)) ? 'rebuild: killed' : 'rebuild: had finished');
    } else {
      // A journal of live changes (sites imported while serving), then serve killed during its start-up, where it folds it.
      const served = await serveReady(dir);
      const file = siteFile(`journal-${round}`, 1100, '2026-11-03T10:00:00Z', false);
      await run(process.execPath, [CLI, 'import', file], { env: { ...process.env, ...ENV, DATA_DIR: dir } });
      for (const until = Date.now() + 30_000; ; await sleep(25)) {
        const health = (await (await fetch(`${served.base}/healthz`)).json()) as { lag: { positions: string } };
        if (health.lag.positions === '0') break;
        if (Date.now() > until) throw new Error('the import was not applied within 30 s');
      }
      await stop(served.process);
      const starting = start(dir, 'serve');
      await sleep(delay);
      const killed = await kill(starting);
      const folded = starting.lines.some((l) => l.includes('journal folded'));
      foldPending = killed && !folded;
      note(!killed ? 'fold: serve had exited' : folded ? 'fold: killed after the fold' : 'fold: killed before the fold ended');
    }

    // Started again: every acknowledged write is there, and every list is what a fresh rebuild of the log answers.
    const again = await serveReady(dir);
    if (foldPending) note(again.process.lines.some((l) => l.includes('journal folded')) ? 'fold: done again at the restart' : 'fold: not needed at the restart');
    foldPending = false;
    const served = await everyList(again.base);
    const shown = new Map<string, string>();
    for (const page of served.filter((p) => p.startsWith('sites '))) {
      for (const site of (JSON.parse(page.slice(page.indexOf('{'))) as { results: Array<{ id: string; title: string }> }).results) shown.set(site.id, site.title);
    }
    t.equal([...sites].filter(([id, title]) => shown.get(id) !== title).length, 0, `round ${round} (${scenario}, ${delay} ms): all ${sites.size} sites acknowledged are there`);
    const assigned = new Set<string>();
    for (const user of new Set(assignments.map((a) => a.user))) {
      for (let page = 1; ; page++) {
        const res = await fetch(`${again.base}/api/sites/?user.id=${user}&limit=100&page=${page}`, { headers: { 'api-key': DEMO_KEY } });
        const body = (await res.json()) as { next: string | null; results: Array<{ id: string }> };
        for (const site of body.results) assigned.add(`${site.id} ${user}`);
        if (body.next === null) break;
      }
    }
    t.equal(assignments.filter((a) => !assigned.has(`${a.site} ${a.user}`)).length, 0, `round ${round}: all ${assignments.length} assignments acknowledged are there`);
    await stop(again.process);

    const fresh = join(tmp.dir, `fresh-${round}`);
    mkdirSync(fresh);
    cpSync(join(dir, 'log'), join(fresh, 'log'), { recursive: true });
    await run(process.execPath, [CLI, 'rebuild'], { env: { ...process.env, ...ENV, DATA_DIR: fresh } });
    const rebuilt = await serveReady(fresh);
    const expected = await everyList(rebuilt.base);
    await stop(rebuilt.process);
    const differing = served.findIndex((text, i) => text !== expected[i]);
    t.ok(served.length === expected.length && differing === -1, `round ${round}: ${served.length} pages as a fresh rebuild's`, {
      first_difference: differing === -1 ? undefined : { served: served[differing]?.slice(0, 300), rebuilt: expected[differing]?.slice(0, 300) },
    });
  }
  t.comment(`moments hit: ${JSON.stringify(hits)}`);
});
