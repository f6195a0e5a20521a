#!/usr/bin/env -S node --concurrent-marking-max-worker-num=1
/**
 * vm-api: serve, import, rebuild, keys issue / revoke / list, institutions list.
 * Configuration comes from the environment (see src/config.ts).
 *
 * Node runs it with one thread of V8's concurrent marking, not one per V8 helper thread (four): those helpers ran at
 * the server's priority and took the CPU its requests waited for. During a live import into a served DATA_DIR
 * (the operator run's live step, 100,000 events, 1M shifts), reads p99 was 33.9-167.3 ms in seven runs (median 51.3)
 * with one marker, against 30.7-372.2 ms in ten (median 144.7) with four; `rebuild` took 14.40-14.81 s against
 * 13.97-15.66 s, `import` 16.05-17.12 s against 15.96-16.19 s (alternated). V8 reads the flag when it makes its heap:
 * only node's command line sets it (not NODE_OPTIONS, nor v8.setFlagsFromString at start).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { availableParallelism, getPriority, setPriority } from 'node:os';
import { accessSync, constants, existsSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import closeWithGrace from 'close-with-grace';
import { loadConfig, type Config } from '../config.js';
import { sha256 } from '../http/auth.js';
import { createServer } from '../http/server.js';
import { webhookSettings } from '../webhooks/settings.js';
import { type DomainEvent, type EventType, eventSchemas } from '../events/catalog.js';
import { appendChecked, importEvents } from '../importer/import.js';
import { createLogger } from '../logger.js';
import { EmbeddedEventStore } from '../eventstore/embedded.js';
import { type EventStore, eventNumber } from '../eventstore/port.js';
import type { LogListing } from '../importer/log-listing.js';
import { copyLog, LogCopyError } from '../eventstore/log-copy.js';
import { checkDataDir, openEventStore, openRuntime, type Runtime } from '../runtime.js';
import { replayInParallel } from '../readmodel/parallel-replay.js';
import { WarmUp } from '../readmodel/warm-up.js';
import { importOnThread, ImportRefused } from './import-thread.js';
import { progressPrinter } from './progress.js';
import { toldByMessage } from './told-by-message.js';
import { listedResources, listLog, table } from './listing.js';
import { projectRoot, version } from '../version.js';

const USAGE = `usage: vm-api <command> [options]

  serve [--demo]                         serve the API (--demo: import the demo fixture into an empty log first)
  import <file.ndjson>...                validate each file whole, then append its events
  rebuild [--threads <n>]                drop the read model and replay the whole log (an embedded log
                                         of 100,000 events or more on up to 4 threads, one per core)
  keys issue --institution <id> [--label <text>]
                                         issue an API key (printed once; only its hash is stored)
  keys revoke <key_id>                   revoke an API key
  keys list [--institution <id>]         the API keys: id, institution, label, created, revoked
  institutions list                      the institutions: id, name, records per resource
  repair-log                             copy every event of the embedded log into a new log and put it in the
                                         old one's place (kept beside it); with serve stopped (see the README)
  help, --help, -h                       this text (also after any command)
  --version                              the version

environment: PORT, HOST, DATA_DIR, EVENTSTORE_URL, PUBLIC_BASE_URL, LOG_LEVEL, CATCH_UP_PARALLEL_FROM, JOURNAL_FOLD_FROM,
  FRAGMENT_CACHE_MB, RANK_MATRIX_MB, READY_MAX_LAG_MS, RATE_LIMIT_MAX, RATE_LIMIT_WINDOW, CORS_ORIGINS, WEBHOOK_DELIVERY,
  WEBHOOK_ALLOW_HTTP, WEBHOOK_ALLOW_PRIVATE_NETWORKS, WEBHOOK_RETRY_BASE_MS, WEBHOOK_MAX_ATTEMPTS, WEBHOOK_TIMEOUT_MS,
  WEBHOOK_SECRET_KEY (see the README)`;

const fixture = (name: string) => join(projectRoot(), 'fixtures', name);

class UsageError extends Error {}

/** A mistake of the operator's or a state of the data that stops the command: one line (its message), exit 1. */
class OperatorError extends Error {}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Each file can be read as a file: else the operator is told which and why (before anything is opened). */
function checkReadable(files: readonly string[]): void {
  for (const file of files) {
    let stats;
    try {
      stats = statSync(file);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new OperatorError(code === 'ENOENT' ? `no such file: ${file}` : `cannot read ${file} (${code ?? String(error)})`);
    }
    if (stats.isDirectory()) throw new OperatorError(`${file} is a directory, not an NDJSON file`);
    try {
      accessSync(file, constants.R_OK);
    } catch {
      throw new OperatorError(`cannot read ${file}: permission denied`);
    }
  }
}

/** node:util's parseArgs refusing the arguments (an unknown option, a missing value) is a usage error too. */
function asUsageError(error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_') ? new UsageError((error as Error).message) : error;
}

/** An event built here, validated like an imported line. */
function checkedEvent(type: EventType, data: unknown): DomainEvent {
  const parsed = eventSchemas[type].safeParse(data);
  if (!parsed.success) {
    throw new UsageError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
  }
  return { type, data: parsed.data } as DomainEvent;
}

async function serve(config: Config, demo: boolean): Promise<void> {
  const logger = createLogger(config.LOG_LEVEL);
  if (demo) {
    const store = openEventStore(config);
    const empty = (await store.head()).commit < 0n;
    if (empty) await importEvents(store, 'fixtures/demo.ndjson', readFileSync(fixture('demo.ndjson'), 'utf8'));
    await store.close();
  }
  const runtime = openRuntime(config, logger);
  // Listen at once; the read model is made ready meanwhile (the API answers 503 until it is, /healthz says how far).
  const warmUp = new WarmUp(runtime, { parallelFrom: config.CATCH_UP_PARALLEL_FROM, threads: replayThreads(), logEveryMs: 3000 }, logger);
  const server = await createServer(runtime, logger, {
    publicBaseUrl: config.PUBLIC_BASE_URL,
    readiness: warmUp,
    readyMaxLagMs: config.READY_MAX_LAG_MS,
    rateLimit: { max: config.RATE_LIMIT_MAX, window: config.RATE_LIMIT_WINDOW },
    corsOrigins: config.CORS_ORIGINS,
    webhooks: webhookSettings(config),
  });
  if (config.WEBHOOK_SECRET_KEY === undefined) {
    logger.warn('WEBHOOK_SECRET_KEY is not set: webhook secrets made now are stored in the log in plaintext (set it to store them encrypted)');
  }
  // The address actually bound (PORT=0 picks a free port).
  let url: string;
  try {
    url = await server.listen({ port: config.PORT, host: config.HOST });
  } catch (error) {
    await server.close();
    await runtime.close();
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new OperatorError(`port ${config.PORT} on ${config.HOST} is already in use (set PORT to another)`);
    if (code === 'EADDRNOTAVAIL' || code === 'EACCES') throw new OperatorError(`cannot listen on ${config.HOST}:${config.PORT} (${code})`);
    throw error;
  }
  // SIGTERM/SIGINT: stop accepting, finish the requests in flight, stop the projector after its batch, close the log and LMDB.
  closeWithGrace({ delay: 10_000 }, async ({ err, signal }) => {
    const started = performance.now();
    if (err) logger.error({ err }, 'shutting down after an error');
    else logger.info({ signal }, 'shutting down: no new connections; finishing the requests in flight');
    await server.close();
    logger.info('requests finished; stopping the projector and closing the log and the read model');
    await runtime.close();
    logger.info({ ms: Math.round(performance.now() - started) }, 'stopped');
  });
  const ready = warmUp.run();
  ready.catch((err: unknown) => {
    logger.fatal({ err }, 'the read model could not be made ready; stopping');
    process.exit(1);
  });
  logger.info({ url, version: version() }, 'Volunteer Management API listening');
  if (demo) {
    // For the human who ran `npm start` (not a log line: the demo key is a key). Where stdout is not a terminal (a
    // log file, a shipper) it carries JSON lines only: the human reads stderr.
    const tell = process.stdout.isTTY ? console.log : console.error;
    const key = readFileSync(fixture('demo.key'), 'utf8').trim();
    // The demo's log is small: its key is checked once the read model is ready.
    await ready;
    if (runtime.model.apiKey(sha256(key))) {
      tell(`\nVolunteer Management API (demo data) at ${url}\nDemo API key: ${key}\nTry: curl -H 'API-KEY: ${key}' ${url}/api/shifts/\n`);
    } else {
      tell(`\nVolunteer Management API at ${url} (the demo key is not valid on this data)\n`);
    }
  } else if (process.stdout.isTTY) {
    console.log(`\nVolunteer Management API at ${url}\n`);
  }
}

/** The summary of the log an import reads first and writes last (log-summary.ts), in the DATA_DIR; keys and institutions commands read it too. */
const summaryOf = (config: Config) => join(config.DATA_DIR, 'import-summary');

async function importFiles(config: Config, args: string[]): Promise<void> {
  // Anything that looks like an option is one (and none is known), never a file name.
  const files = parseArgs({ args, options: {}, allowPositionals: true }).positionals;
  if (files.length === 0) throw new UsageError('import needs at least one file');
  checkReadable(files);
  yieldToServers();
  let shown: { file: string; progress: ReturnType<typeof progressPrinter> } | undefined;
  const endProgress = () => {
    shown?.progress.done();
    shown = undefined;
  };
  await importOnThread(
    { config, files, summaryFile: summaryOf(config) },
    {
      progress(file, progress) {
        if (shown?.file !== file) {
          endProgress();
          shown = { file, progress: progressPrinter(`import ${file}`) };
        }
        shown.progress.update(progress);
      },
      imported(file, appended, skipped, seconds) {
        endProgress();
        console.log(`${file}: ${appended} events appended, ${skipped} already in the log (${seconds.toFixed(2)} s)`);
      },
    },
  ).finally(endProgress);
}

/** The CPU priority (niceness) an import runs at, at least: batch work, below a server's requests. */
const IMPORT_NICENESS = 10;

/**
 * An import is batch work: a server answering requests on the same machine (most often, on the same log) should
 * get the CPU first. Without this, an import of a million events into a served DATA_DIR took half of a two-core
 * machine and reads waited behind it. Where priorities cannot be changed the import runs as it is.
 *
 * On Linux a niceness is a thread's: setting the main thread's leaves the threads started with the process (V8's
 * garbage collection and compiler helpers) at the priority given, and those collected the line workers' garbage at
 * a server's priority. So every thread of the process is set, before the line workers start (threads started
 * later take their starter's niceness), the main thread last: once it runs at the import's niceness, so do all.
 */
function yieldToServers(): void {
  const threads = processThreads();
  for (const thread of [...threads.filter((id) => id !== process.pid), ...threads.filter((id) => id === process.pid)]) {
    try {
      if (getPriority(thread) < IMPORT_NICENESS) setPriority(thread, IMPORT_NICENESS);
    } catch {
      // not permitted here (or the thread has ended): run at the priority given
    }
  }
}

/** The ids of this process's threads where the system lists them (Linux), else the process's own id (0). */
function processThreads(): number[] {
  try {
    return readdirSync('/proc/self/task').map(Number);
  } catch {
    return [0];
  }
}

/** An embedded log of at least this many events is replayed on several threads unless --threads says otherwise. */
const PARALLEL_FROM = 100_000;
/** Threads a rebuild uses at most unless --threads says otherwise (each reads the whole log). */
const MAX_THREADS = 4;
/** Threads a replay uses by default: one per core, at most MAX_THREADS. */
const replayThreads = () => Math.min(availableParallelism(), MAX_THREADS);

/** The --threads option: a whole number from 1 to 64, or undefined (choose). */
function threadsOption(args: string[]): number | undefined {
  const { threads } = parseArgs({ args, options: { threads: { type: 'string' } } }).values;
  if (threads === undefined) return undefined;
  const n = Number(threads);
  if (!/^\d+$/.test(threads) || n < 1 || n > 64) throw new UsageError(`--threads must be a whole number from 1 to 64, not ${threads}`);
  return n;
}

async function rebuild(config: Config, threads: number | undefined): Promise<void> {
  requireEventLog(config, 'nothing to rebuild');
  const runtime = openRuntime(config);
  try {
    const started = performance.now();
    await runtime.disk.clear();
    const { store } = runtime;
    const head = await store.head();
    const large = store.kind === 'embedded' && head.commit >= PARALLEL_FROM;
    const workers = threads ?? (large ? replayThreads() : 1);
    // The embedded log numbers its events: its head's number is how many a replay reads (EventStoreDB's positions are not counts).
    const total = store.kind === 'embedded' ? eventNumber(head) : undefined;
    const progress = progressPrinter('rebuild');
    // (Events appended meanwhile may be read past the head the total was taken at.)
    const replaying = (read: number) => progress.update({ phase: 'replaying', done: total === undefined ? read : Math.min(read, total), total });
    let eventsApplied: number;
    try {
      eventsApplied = workers > 1 ? (await replayInParallel(store, runtime.disk, workers, replaying)).applied : await replayHere(runtime, replaying);
    } finally {
      progress.done();
    }
    const seconds = (performance.now() - started) / 1000;
    const on = workers > 1 ? ` on ${workers} threads` : '';
    console.log(`rebuilt the read model from ${eventsApplied} events in ${seconds.toFixed(2)} s${on}`);
  } finally {
    await runtime.close();
  }
}

/** The one-thread rebuild: the projector's replay into the cleared read model, telling `onRead` the events read so far; the events applied. */
async function replayHere({ projector }: Runtime, onRead: (read: number) => void): Promise<number> {
  await projector.load();
  await projector.catchUp(onRead);
  return projector.status().eventsApplied;
}

/**
 * A command that reads the log (rebuild, keys, institutions) run where there is none: it says so and makes none
 * (opening the embedded log would make an empty one, and DATA_DIR with it). `nothingTo` says what it cannot do.
 */
function requireEventLog(config: Config, nothingTo: string): void {
  if (config.EVENTSTORE_URL !== undefined || existsSync(join(config.DATA_DIR, 'log', 'data.mdb'))) return;
  checkDataDir(config.DATA_DIR);
  throw new OperatorError(`no event log in ${config.DATA_DIR}: ${nothingTo} (import a file first)`);
}

/** The log's listing (keys, institutions) handed to `use` with the log open; the log must exist. */
async function withListing(config: Config, nothingTo: string, use: (store: EventStore, listing: LogListing) => Promise<void>): Promise<void> {
  requireEventLog(config, nothingTo);
  const store = openEventStore(config);
  try {
    await use(store, await listLog(store, summaryOf(config)));
  } finally {
    await store.close();
  }
}

/** An institution id not in the log, in the CLI's own words (what was given is echoed only if it is an id). */
const unknownInstitution = (id: string) =>
  new OperatorError(`unknown institution ${UUID.test(id) ? id : '(not an institution id)'}: \`vm-api institutions list\` shows them`);

async function keys(config: Config, args: string[]): Promise<void> {
  const [action, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    options: { institution: { type: 'string' }, label: { type: 'string' } },
    allowPositionals: true,
  });
  // The arguments are checked before the log is opened: a command refused makes nothing on disk.
  if (action === 'list') return listKeys(config, values.institution?.toLowerCase());
  if (action === 'issue') {
    if (!values.institution) throw new UsageError('keys issue needs --institution <id>');
    return issueKey(config, values.institution.toLowerCase(), values.label);
  }
  if (action === 'revoke') {
    const keyId = positionals[0]?.toLowerCase();
    if (!keyId) throw new UsageError('keys revoke needs <key_id>');
    // What was given may be a secret pasted by mistake: it is never printed unless it is a key id.
    if (!UUID.test(keyId)) throw new OperatorError('that is not a key id (a UUID, as `vm-api keys list` shows); revoking needs no key');
    return revokeKey(config, keyId);
  }
  throw new UsageError('keys issue | keys revoke | keys list');
}

/** The keys issued, of one institution or all. */
async function listKeys(config: Config, institution: string | undefined): Promise<void> {
  await withListing(config, 'no keys to list', async (_, { keys: issued, institutions }) => {
    // An institution the log does not hold is a mistake (a typo, another DATA_DIR), not one without keys.
    if (institution !== undefined && !institutions.has(institution)) throw unknownInstitution(institution);
    const rows = [...issued.values()].filter((k) => institution === undefined || k.institution === institution);
    console.log(table([['key_id', 'institution', 'label', 'created', 'revoked'], ...rows.map((k) => [k.keyId, k.institution, k.label ?? '', k.created, k.revoked ?? ''])]));
  });
}

async function issueKey(config: Config, institution: string, label: string | undefined): Promise<void> {
  await withListing(config, 'no institution to issue a key for', async (store, { institutions }) => {
    if (!institutions.has(institution)) throw unknownInstitution(institution);
    const key = `vm_${randomBytes(24).toString('base64url')}`;
    const keyId = randomUUID();
    const data = { institution_id: institution, occurred_at: new Date().toISOString(), key_id: keyId, key_sha256: sha256(key), ...(label ? { label } : {}) };
    await appendChecked(store, 'keys issue', [{ line: 0, eventId: randomUUID(), event: checkedEvent('ApiKeyIssued', data) }], { summaryFile: summaryOf(config) });
    console.log(`key_id: ${keyId}\napi key: ${key}\n(the key is shown only now; only its hash is stored)`);
  });
}

async function revokeKey(config: Config, keyId: string): Promise<void> {
  await withListing(config, 'no key to revoke', async (store, { keys: issued }) => {
    const key = issued.get(keyId);
    if (!key) throw new OperatorError(`no API key ${keyId}`);
    if (key.revoked !== null) {
      console.log(`key ${keyId} was already revoked (${key.revoked}); nothing appended`);
      return;
    }
    const data = { institution_id: key.institution, occurred_at: new Date().toISOString(), key_id: keyId };
    await appendChecked(store, 'keys revoke', [{ line: 0, eventId: randomUUID(), event: checkedEvent('ApiKeyRevoked', data) }], { summaryFile: summaryOf(config) });
    console.log(`revoked ${keyId}`);
  });
}

async function institutionsList(config: Config, args: string[]): Promise<void> {
  const [action] = parseArgs({ args, options: {}, allowPositionals: true }).positionals;
  if (action !== 'list') throw new UsageError('institutions list');
  await withListing(config, 'no institutions to list', async (_, { institutions }) => {
    const rows = [...institutions.values()].map((i) => [i.id, i.name, ...listedResources.map((r) => String(i.records.get(r) ?? 0))]);
    console.log(table([['id', 'name', ...listedResources], ...rows]));
  });
}

/**
 * The embedded log copied event by event into a new one, which then takes
 * its place; the old one is kept beside it as log-damaged-<time>. For a log
 * whose events read back but whose files can no longer be written.
 */
async function repairLog(config: Config): Promise<void> {
  if (config.EVENTSTORE_URL !== undefined) throw new OperatorError('repair-log copies the embedded log; EVENTSTORE_URL is set');
  const path = join(config.DATA_DIR, 'log');
  if (!existsSync(join(path, 'data.mdb'))) throw new OperatorError(`no event log in ${config.DATA_DIR}: nothing to repair`);
  // No dot in these names: lmdb-js takes a path with an extension for a file, not a directory.
  const target = join(config.DATA_DIR, 'log-repairing');
  rmSync(target, { recursive: true, force: true });
  const from = EmbeddedEventStore.open(path, { readOnly: true });
  const to = EmbeddedEventStore.open(target);
  const progress = progressPrinter('repair-log');
  const copied = await copyLog(from, to, (done, total) => progress.update({ phase: 'copying', done, total })).finally(async () => {
    progress.done();
    await Promise.all([from.close(), to.close()]);
  }).catch((error: unknown) => {
    rmSync(target, { recursive: true, force: true });
    throw error instanceof LogCopyError ? new OperatorError(`repair-log: ${error.message}; the log is as it was`) : error;
  });
  const kept = join(config.DATA_DIR, `log-damaged-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  renameSync(path, kept);
  renameSync(target, path);
  console.log(`copied ${copied} events into a new log in ${path}; the old one is kept in ${kept}`);
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  if (command === 'help' || command === '--help' || command === '-h' || args.includes('--help') || args.includes('-h')) {
    console.log(USAGE);
    return 0;
  }
  if (command === '--version') {
    console.log(version());
    return 0;
  }
  try {
    const config = loadConfig();
    switch (command) {
      case 'serve':
        await serve(config, parseArgs({ args, options: { demo: { type: 'boolean' } } }).values.demo ?? false);
        return 0;
      case 'import':
        await importFiles(config, args);
        return 0;
      case 'rebuild':
        await rebuild(config, threadsOption(args));
        return 0;
      case 'keys':
        await keys(config, args);
        return 0;
      case 'institutions':
        await institutionsList(config, args);
        return 0;
      case 'repair-log':
        parseArgs({ args, options: {} });
        await repairLog(config);
        return 0;
      default:
        throw new UsageError(command ? `unknown command ${command}` : 'no command');
    }
  } catch (thrown) {
    const error = asUsageError(thrown);
    if (error instanceof UsageError) console.error(`${error.message}\n\n${USAGE}`);
    else if (error instanceof OperatorError || error instanceof ImportRefused || toldByMessage(error)) console.error(error.message);
    else console.error(error);
    return error instanceof UsageError ? 2 : 1;
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === realpathSync(process.argv[1])) {
  const code = await main(process.argv.slice(2));
  if (code !== 0 || process.argv[2] !== 'serve') process.exitCode = code;
}
