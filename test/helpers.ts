/**
 * Test helpers: a real app (embedded LMDB log, LMDB read model, Fastify)
 * over a temporary DATA_DIR, driven with app.inject.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import v8 from 'node:v8';
import type { FastifyInstance } from 'fastify';
import { open } from 'lmdb';
import { type Logger, pino } from 'pino';
import { createServer, type ServerOptions } from '../src/http/server.js';
import { importEvents } from '../src/importer/import.js';
import { openRuntime, type Runtime } from '../src/runtime.js';
import { WarmUp } from '../src/readmodel/warm-up.js';
import type { EventStore } from '../src/eventstore/port.js';

export const ROOT = new URL('..', import.meta.url).pathname;
export const fixturePath = (name: string) => join(ROOT, 'fixtures', name);
export const readFixture = (name: string) => readFileSync(fixturePath(name), 'utf8');

export const DEMO_KEY = readFixture('demo.key').trim();
/** The second organization of the demo fixture (see scripts/demo-fixture.ts). */
export const HARBOR_KEY = 'vm_demo_harbor_3Hd8nV2cRq6yJ1bM';

/** The tests' fixed "now" (profiles' ages are computed against its day). */
/** V8's own test of a value: a small integer (held in the object itself), not a heap object such as a boxed number. */
export const isSmi: (value: unknown) => boolean = (() => {
  v8.setFlagsFromString('--allow-natives-syntax');
  const test = new Function('value', 'return %IsSmi(value);') as (value: unknown) => boolean;
  v8.setFlagsFromString('--no-allow-natives-syntax');
  return test;
})();

export const TEST_NOW = Date.UTC(2026, 10, 1, 12, 0, 0);

export function tempDir(prefix = 'vm-test-'): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface TestApp {
  dir: string;
  runtime: Runtime;
  server: FastifyInstance;
  /** GET with the demo key (or another), parsed. */
  get(url: string, key?: string | null): Promise<{ status: number; body: any; text: string }>;
  close(): Promise<void>;
}

/** Start the app over `dir` (a fresh temporary one by default), after importing the given NDJSON files. */
export interface StartOptions {
  dir?: string;
  fixtures?: string[];
  keep?: boolean;
  /** Use EventStoreDB (e.g. the stand-in) as the log instead of the embedded one. */
  eventstoreUrl?: string;
  /** What the HTTP app's writes go through (the real store by default). */
  commandStore?: (store: EventStore) => EventStore;
  /** The projector's and server's logger (silent by default). */
  logger?: Logger;
  /** How long a request may take to arrive (the server's default otherwise). */
  requestTimeoutMs?: number;
  /** /readyz's bound on the lag (the server's default otherwise). */
  readyMaxLagMs?: number;
  /** Server options besides (rate limit, CORS). */
  server?: Pick<ServerOptions, 'rateLimit' | 'corsOrigins' | 'webhooks'>;
}

export async function startApp(options: StartOptions = {}): Promise<TestApp> {
  const temp = options.dir ? undefined : tempDir();
  const dir = options.dir ?? temp!.dir;
  const logger = options.logger ?? pino({ level: 'silent' });
  const runtime = openRuntime({ DATA_DIR: dir, EVENTSTORE_URL: options.eventstoreUrl }, logger, { clock: () => TEST_NOW });
  for (const name of options.fixtures ?? []) await importEvents(runtime.store, name, readFixture(name));
  await runtime.projector.start();
  const served = options.commandStore ? { ...runtime, store: options.commandStore(runtime.store) } : runtime;
  const server = await createServer(served, logger, {
    publicBaseUrl: 'http://vm.test',
    requestTimeoutMs: options.requestTimeoutMs,
    readyMaxLagMs: options.readyMaxLagMs,
    ...options.server,
  });
  await server.ready();
  return {
    dir,
    runtime,
    server,
    async get(url, key = DEMO_KEY) {
      const res = await server.inject({ method: 'GET', url, headers: key === null ? {} : { 'api-key': key } });
      return { status: res.statusCode, body: res.json(), text: res.body };
    },
    async close() {
      await server.close();
      await runtime.close();
      if (!options.keep) temp?.remove();
    },
  };
}

/** The app as `vm-api serve` starts it over `dir`: listening before its read model is ready. */
export async function serveWarmingUp(
  dir: string,
  options: { parallelFrom: number; releaseEvery?: number; store?: (store: EventStore) => EventStore; logger?: Logger },
) {
  const logger = options.logger ?? pino({ level: 'silent' });
  const runtime = openRuntime({ DATA_DIR: dir, EVENTSTORE_URL: undefined }, logger, { clock: () => TEST_NOW });
  const warmUp = new WarmUp(
    { ...runtime, store: options.store?.(runtime.store) ?? runtime.store },
    { parallelFrom: options.parallelFrom, threads: 2, logEveryMs: 1000, releaseEvery: options.releaseEvery },
    logger,
  );
  const server = await createServer(runtime, logger, { publicBaseUrl: 'http://vm.test', readiness: warmUp });
  await server.ready();
  const ready = warmUp.run();
  const get = async (url: string, key: string | null = DEMO_KEY) => {
    const res = await server.inject({ method: 'GET', url, headers: key === null ? {} : { 'api-key': key } });
    return { status: res.statusCode, body: res.json(), text: res.body, headers: res.headers };
  };
  return {
    runtime,
    ready,
    get,
    async close() {
      await server.close();
      await runtime.close();
    },
  };
}

/** The value `get` gives once it gives one (polled every 5 ms), or a rejection after `ms`. */
export function until<T>(get: () => T | undefined | Promise<T | undefined>, ms = 5000): Promise<T> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const tick = async () => {
      try {
        const value = await get();
        if (value !== undefined) return resolve(value);
      } catch (error) {
        return reject(error);
      }
      if (Date.now() - started > ms) return reject(new Error(`nothing within ${ms} ms`));
      setTimeout(() => void tick(), 5);
    };
    void tick();
  });
}

/** The embedded store as built (`dist`), for scripts run in other processes. */
export const BUILT_EMBEDDED_STORE = join(ROOT, 'dist', 'src', 'eventstore', 'embedded.js');

/**
 * In another process (the built store), `rounds` events appended to each of `streams` streams (`s-0`, `s-1`, …;
 * data `{ s, round }`) with their stream entries put off, a round a transaction; then it dies without writing them.
 */
export async function putOffAndDie(path: string, streams: number, rounds: number): Promise<void> {
  await promisify(execFile)(process.execPath, [
    '--input-type=module',
    '-e',
    `const { EmbeddedEventStore } = await import(${JSON.stringify(BUILT_EMBEDDED_STORE)});
const store = EmbeddedEventStore.open(process.argv[1]);
let asOf = await store.head();
for (let round = 0; round < ${rounds}; round++) {
  const appends = Array.from({ length: ${streams} }, (_, s) => ({ stream: 's-' + s, events: [{ id: crypto.randomUUID(), type: 'CategoryCreated', data: { s, round } }], knownRevision: round - 1 }));
  asOf = (await store.appendMany(appends, { asOf, deferStreamEntries: true })).position;
}
process.exit(0);`,
    path,
  ]);
}

/** The stream tables of the log at `path` as they are stored: each entry's key and value bytes, in key order; and whether entries lag. */
export function indexBytes(path: string): { streams: string[]; streamIds: string[]; indexed: unknown } {
  const root = open({ path, readOnly: true, compression: false });
  try {
    const entries = (name: string) => [...root.openDB<Buffer, Buffer>({ name, encoding: 'binary', keyEncoding: 'binary' }).getRange()].map(({ key, value }) => `${key.toString('hex')} ${value.toString('hex')}`);
    return { streams: entries('streams'), streamIds: entries('stream-ids'), indexed: root.openDB<unknown, string>({ name: 'meta' }).get('indexed') };
  } finally {
    void root.close();
  }
}

/** Each event's value bytes (hex) in the embedded log at `path` (not open here), by position, and its shared structures' bytes. */
export function logBytes(path: string): { events: string[]; structures: string | undefined } {
  const root = open({ path, readOnly: true, compression: false });
  try {
    const db = root.openDB<Buffer, number>({ name: 'events', encoding: 'binary' });
    const events = [...db.getRange({ start: 1 })].map(({ value }) => value.toString('hex'));
    return { events, structures: db.getBinary(Symbol.for('structures') as unknown as number)?.toString('hex') };
  } finally {
    void root.close();
  }
}
