/** The process logger: JSON lines, pretty only when stdout is a terminal. */
import { pino, type Logger } from 'pino';

export function createLogger(level: string): Logger {
  return pino({
    level,
    redact: { paths: ['req.headers["api-key"]', 'headers["api-key"]'], censor: '[redacted]' },
    ...(process.stdout.isTTY ? { transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss' } } } : {}),
  });
}
