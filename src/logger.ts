/** The process logger: JSON lines, pretty only when stdout is a terminal. */
import { pino, type Logger } from 'pino';

/**
 * Bytes of log lines held in memory while stdout takes no more (a log
 * shipper that stalls, a pipe nobody reads): past it, lines are dropped and
 * counted rather than the process growing until it dies.
 */
export const LOG_BUFFER_BYTES = 32 * 1024 * 1024;

/** Log lines dropped since start because stdout could not take them (`log_lines_dropped_total`). */
export const logDrops = { count: 0 };

/** An asynchronous writer to `fd` that holds at most `maxBytes` of lines not yet written, dropping the rest. */
export function logDestination(fd: number, maxBytes = LOG_BUFFER_BYTES): ReturnType<typeof pino.destination> {
  const destination = pino.destination({ dest: fd, sync: false, maxLength: maxBytes });
  destination.on('drop', () => {
    logDrops.count += 1;
  });
  return destination;
}

/** The service's logger, writing to stdout (or to `fd`: the benchmark's server logs as the service does, elsewhere). */
export function createLogger(level: string, fd: number = process.stdout.fd): Logger {
  const options = {
    level,
    redact: { paths: ['req.headers["api-key"]', 'headers["api-key"]'], censor: '[redacted]' },
  };
  if (fd === process.stdout.fd && process.stdout.isTTY) return pino({ ...options, transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss' } } });
  return pino(options, logDestination(fd));
}
