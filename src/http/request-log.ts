/**
 * The lines Fastify writes about each request: one at `info`, when it is
 * answered, saying what it was (method, URL, host, address), how it went
 * (status, time), and whose it was (the API key's id and the institution,
 * once authenticated; never the key); "incoming request" only at `debug`.
 *
 * Fastify's own are two lines a request, and the key's id and institution
 * came on them through a child logger made per request. At the default
 * level that cost about a quarter of the server's CPU on the constant route
 * under /api/ (173-216 µs a request against 121-164 with one line; pino's
 * `child` alone took 11.5 µs). Every line about a request carries its
 * `reqId`, so the others (an error logged while it ran) are found by it.
 */
import { type FastifyReply, type FastifyRequest, LogController } from 'fastify';

export class RequestLog extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    // (Outside /api/ there is no key: the fields are left out.)
    const line = { req: request, res: reply, responseTime: reply.elapsedTime, key_id: request.apiKeyId || undefined, institution: request.institutionId || undefined };
    if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else reply.log.info(line, 'request completed');
  }
}
