/** A keep-alive HTTP client for the benchmarks that drive a `vm-api serve` on a port: one call, its status and body. */
import { Agent, request } from 'node:http';

export interface Answer {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}
export type Call = (method: 'GET' | 'POST', path: string, key: string | undefined, body?: unknown) => Promise<Answer>;

export function client(port: number, maxSockets: number): Call {
  const agent = new Agent({ keepAlive: true, maxSockets });
  return (method, path, key, body) =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = request(
        { agent, host: '127.0.0.1', port, method, path, headers: { ...(key ? { 'api-key': key } : {}), ...(payload ? { 'content-type': 'application/json' } : {}) } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), headers: res.headers }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
}
