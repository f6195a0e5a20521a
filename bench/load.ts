/**
 * The benchmark's load generator, in its own process (its own core):
 * autocannon cycling through a list of requests. Reads its job as JSON from
 * the file named on argv (a list of thousands of paths is past what one
 * argument may hold) and prints the result as JSON.
 */
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

interface Job {
  url: string;
  paths: string[];
  headers: Record<string, string>[];
  connections: number;
  seconds: number;
}

const job = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as Job;
const result = await autocannon({
  url: job.url,
  connections: job.connections,
  duration: job.seconds,
  requests: job.paths.map((path, i) => ({ method: 'GET' as const, path, headers: job.headers[i] ?? {} })),
});
process.stdout.write(
  JSON.stringify({
    requests: result.requests.total,
    rps: result.requests.total / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
    bytes: result.throughput.total,
  }) + '\n',
);
