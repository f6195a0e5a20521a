/**
 * Requests refused before any route runs answer like every other error:
 * `{"detail": "…"}` JSON. Node's HTTP parser refuses some (headers over the
 * limit: 431; a request that took too long: 408; anything it cannot parse:
 * 400) — those answers are written on the socket, which is then closed, so
 * they say `Connection: close` first and end the socket gracefully (a
 * keep-alive client reads the answer and opens a new connection, instead of
 * sending its next request into a socket that was destroyed). The router
 * refuses others (a malformed percent-encoding in the path: 400; a path
 * parameter past its limit: 414). A URL longer than MAX_URL_LENGTH is a 414.
 */
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import { HttpError } from './errors.js';

/** Longer URLs are refused with 414 (Node's parser refuses a request line and headers over 16 KB with 431). */
export const MAX_URL_LENGTH = 8 * 1024;

const detailFor = (code: string | undefined): [number, string] => {
  switch (code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return [408, 'The request took too long to arrive.'];
    case 'HPE_HEADER_OVERFLOW':
      return [431, 'The request line and headers are too large (16 KB at most).'];
    case 'HPE_INVALID_METHOD':
      return [400, 'Unknown HTTP method.'];
    default:
      return [400, 'The request could not be parsed as HTTP.'];
  }
};

/** Node's 'clientError': answer `{detail}` with Connection: close, then end the socket. */
export function clientErrorHandler(this: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket): void {
  // A connection reset: there is nobody to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, detail] = detailFor(error.code);
  this.log.debug({ code: error.code, status }, 'request refused before routing');
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify({ detail });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
  // If the client never reads, do not keep the socket for ever.
  setTimeout(() => socket.destroy(), 5_000).unref();
}

/** The router's own refusals, as `{detail}`. */
export function frameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const [status, detail] =
    error.code === 'FST_ERR_BAD_URL'
      ? [400, 'The URL has a malformed percent-encoding.']
      : error.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? [414, 'The URL is too long.']
        : [400, 'The request could not be routed.'];
  void reply.code(status).type('application/json; charset=utf-8').send({ detail });
}

/** The server options that make these answers. */
export const refusalOptions = { clientErrorHandler, frameworkErrors } satisfies Pick<FastifyServerOptions, 'clientErrorHandler' | 'frameworkErrors'>;

/** Refuse URLs over MAX_URL_LENGTH before anything reads them. */
export function refuseLongUrls(app: FastifyInstance): void {
  app.addHook('onRequest', (request, _reply, done) => {
    done(request.url.length > MAX_URL_LENGTH ? new HttpError(414, `The URL is too long (${MAX_URL_LENGTH} characters at most).`) : undefined);
  });
}
