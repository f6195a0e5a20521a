/**
 * The benchmark's server process: the real runtime and app, plus a route
 * under /api/ that answers a constant body of a requested size (the
 * yardstick the search mix is compared with, on the same server and through
 * the same hooks: a string, as a handler returning a constant would), and one
 * answering the same body already encoded (a floor). Prints one JSON line
 * when listening.
 *
 * It logs as the service does at its default level (info: a line a
 * request, see src/http/request-log.ts), through the same writer, to
 * /dev/null: what reads the lines is not the server's cost. `--bare` logs
 * warnings only, as the constant routes outside /api/ do (the yardstick:
 * no key, no hooks, no line).
 */
import { openSync } from 'node:fs';
import type { FastifyInstance, LogLevel } from 'fastify';
import { createServer } from '../src/http/server.js';
import { createLogger } from '../src/logger.js';
import { finishBackgroundWork } from '../src/readmodel/background.js';
import { configSchema } from '../src/config.js';
import { openRuntime } from '../src/runtime.js';

const dataDir = process.argv[2];
if (!dataDir) throw new Error('usage: server.js <DATA_DIR> [--bare]');
/** --bare: the API without the production surface (compression, ETags, metrics, rate limit, CORS and security headers), for comparison. */
const bare = process.argv.includes('--bare');

const started = performance.now();
// The memory budgets from the environment, as `vm-api serve` takes them.
const budgets = configSchema.pick({ RANK_MATRIX_MB: true, FRAGMENT_CACHE_MB: true }).parse(process.env);
const runtime = openRuntime({ DATA_DIR: dataDir, EVENTSTORE_URL: undefined, ...budgets });
await runtime.projector.start();
const startupMs = performance.now() - started;
globalThis.gc?.();

/**
 * The constant body of `bytes` bytes: `{"pad":""}` after as many spaces as it takes (JSON allows them), a slice of one
 * string (V8 keeps a slice as a reference to it). A string of its own for each size held 80 MB of the heap after
 * the random mix's 12,000 queries, which the memory figures would have counted as the service's.
 */
const CLOSE = '{"pad":""}';
let template = CLOSE;
const bodies = new Map<number, string>();
const bodyOf = (bytes: number) => {
  let body = bodies.get(bytes);
  if (body === undefined) {
    if (bytes > template.length) {
      // Slices of the last one hold it until they are let go of.
      bodies.clear();
      template = ' '.repeat(Math.max(bytes, 2 * template.length) - CLOSE.length) + CLOSE;
    }
    body = template.slice(template.length - Math.max(bytes, CLOSE.length));
    bodies.set(bytes, body);
  }
  return body;
};
const buffers = new Map<number, Buffer>();
/**
 * Registered twice: under /api/, behind the key and every hook the searches pass through (rate limit, ETag,
 * compression, metrics, the request's log line), and at the root (no line logged).
 */
const constantRoutes = (api: FastifyInstance, logLevel?: LogLevel) => {
  api.get<{ Querystring: { bytes?: string } }>('/bench/constant', { logLevel }, async (request, reply) =>
    reply.type('application/json; charset=utf-8').send(bodyOf(Number(request.query.bytes ?? 100))),
  );
  // The same bodies already encoded: no bytes made per request at all (a floor, for comparison).
  api.get<{ Querystring: { bytes?: string } }>('/bench/constant-buffer', { logLevel }, async (request, reply) => {
    const bytes = Number(request.query.bytes ?? 100);
    let body = buffers.get(bytes);
    if (body === undefined) {
      body = Buffer.from(bodyOf(bytes));
      buffers.set(bytes, body);
    }
    return reply.type('application/json; charset=utf-8').send(body);
  });
};

// Every part of the production surface at its default, the rate limit raised above any load the bench makes.
const server = await createServer(runtime, createLogger(bare ? 'warn' : 'info', openSync('/dev/null', 'w')), {
  surface: !bare,
  rateLimit: bare ? undefined : { max: 1_000_000_000, window: '1 minute' },
  apiRoutes: constantRoutes,
});
// And outside /api/ (no key, no hooks, no line logged): the yardstick, as every earlier run measured it.
constantRoutes(server, 'warn');
// How long the server spent on each request (the fixed-query comparison reads it).
server.addHook('onSend', async (_request, reply) => {
  reply.header('server-timing', `app;dur=${reply.elapsedTime.toFixed(3)}`);
});
/**
 * Memory as it is, then after a full collection: big arrays let go of (rank matrices made stale by appends, indexes'
 * old orders) are shared memory V8 does not count (src/big-arrays.ts), so they wait for a collection the heap's own
 * allocations start, and the first figure counts them while they wait. A collection frees a SharedArrayBuffer's memory
 * only later, on a helper thread (400 MB of them let go of: 346 MB still counted after `gc()`, 306 MB after the next
 * macrotask, 2 MB after a second `gc()`), so the second figure is taken after two.
 */
server.get('/bench/memory', async () => {
  const now = process.memoryUsage();
  globalThis.gc?.();
  await new Promise((resolve) => setImmediate(resolve));
  globalThis.gc?.();
  const collected = process.memoryUsage();
  const of = (m: NodeJS.MemoryUsage) => ({ rss: m.rss, heapUsed: m.heapUsed, arrayBuffers: m.arrayBuffers });
  return { now: of(now), collected: of(collected) };
});
// Do now what the background would (rank matrices and zone maps searches wanted, symbol codes), for a measurement of the steady state.
server.get('/bench/settle', async () => {
  const t0 = performance.now();
  finishBackgroundWork(runtime.model);
  return { ms: performance.now() - t0 };
});
// CPU time this process has used, in µs (user + system): per request, steadier than a rate.
server.get('/bench/cpu', async () => {
  const { user, system } = process.cpuUsage();
  return { micros: user + system };
});
await server.listen({ port: 0, host: '127.0.0.1' });
const address = server.server.address();
const port = typeof address === 'object' && address ? address.port : 0;
process.stdout.write(
  JSON.stringify({ port, startupMs, rss: process.memoryUsage().rss, eventsApplied: runtime.projector.status().eventsApplied }) + '\n',
);
process.on('SIGTERM', async () => {
  await server.close();
  await runtime.close();
  process.exit(0);
});
