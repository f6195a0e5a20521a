/** Configuration from the environment, validated at start. */
import { z } from 'zod';

const flag = z.enum(['true', 'false'], { error: 'must be true or false' }).transform((v) => v === 'true');

export const configSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATA_DIR: z.string().min(1).default('./data'),
  EVENTSTORE_URL: z
    .string()
    .regex(/^(esdb|kurrentdb|esdb\+discover|kurrentdb\+discover):\/\//, {
      error: 'must be an esdb:// connection string',
    })
    .optional(),
  PUBLIC_BASE_URL: z
    .url()
    .transform((u) => u.replace(/\/+$/, ''))
    .optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** A read model more events than this behind the embedded log is replayed on threads at start-up, not folded one by one. */
  CATCH_UP_PARALLEL_FROM: z.coerce.number().int().min(0).default(100_000),
  /** A journal of at least this many changes (and a fiftieth of the snapshot) is folded into a new snapshot (see Projector). */
  JOURNAL_FOLD_FROM: z.coerce.number().int().min(1).default(10_000),
  /** Megabytes of records' JSON kept for the next answers that show them, all tables together (the oldest go first). */
  FRAGMENT_CACHE_MB: z.coerce.number().int().min(0).default(256),
  /** Megabytes of rank matrices (for searches read in another index's order), all tables together (the least recently used go first). */
  RANK_MATRIX_MB: z.coerce.number().int().min(0).default(1024),
  /** /readyz answers 503 while the read model is more than this many milliseconds behind the log. */
  READY_MAX_LAG_MS: z.coerce.number().int().min(0).default(5000),
  /** Requests per API key per RATE_LIMIT_WINDOW (0: no limit); per server (each replica counts its own). */
  RATE_LIMIT_MAX: z.coerce.number().int().min(0).default(600),
  RATE_LIMIT_WINDOW: z
    .string()
    .regex(/^\d+\s*(ms|millisecond|second|minute|hour|day)s?$|^\d+$/, { error: 'must be a duration such as "1 minute", "30 seconds" or milliseconds' })
    .default('1 minute'),
  /** Origins allowed to call the API from a browser, comma-separated (unset: CORS off). */
  CORS_ORIGINS: z
    .string()
    .transform((v) => v.split(',').map((o) => o.trim()).filter((o) => o !== ''))
    .optional(),
  /** Whether this server delivers webhooks (set false on every replica but one that share an EventStoreDB). */
  WEBHOOK_DELIVERY: flag.default(true),
  /** Allow http:// webhook URLs (else https:// only). */
  WEBHOOK_ALLOW_HTTP: flag.default(false),
  /** Allow deliveries to loopback, private, link-local and other non-public addresses. */
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: flag.default(false),
  /** The first retry's delay (ms); each next one doubles, capped, with jitter. */
  WEBHOOK_RETRY_BASE_MS: z.coerce.number().int().min(1).default(5000),
  /** Attempts of one event before the subscription is paused. */
  WEBHOOK_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(100).default(8),
  /** How long one delivery attempt may take (ms). */
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(1).default(10_000),
  /** 32 bytes (64 hex digits, or base64) encrypting webhook secrets in the log (AES-256-GCM); unset: kept in plaintext. */
  WEBHOOK_SECRET_KEY: z
    .string()
    .refine((v) => secretKeyBytes(v) !== undefined, { error: 'must be 32 bytes as 64 hex digits or base64' })
    .optional(),
});

/** The 32 bytes of a WEBHOOK_SECRET_KEY (64 hex digits or base64), or undefined when it is not that. */
export function secretKeyBytes(value: string): Buffer | undefined {
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, 'hex');
  if (!/^[A-Za-z0-9+/_-]{43}=?$/.test(value)) return undefined;
  const bytes = Buffer.from(value, 'base64');
  return bytes.length === 32 ? bytes : undefined;
}

export type Config = z.output<typeof configSchema>;

export class ConfigError extends Error {}

/** Parse the environment; empty values count as unset. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const present = Object.fromEntries(
    Object.keys(configSchema.shape)
      .map((k) => [k, env[k]])
      .filter(([, v]) => v !== undefined && v !== ''),
  );
  const parsed = configSchema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration: ${lines.join('; ')}`);
  }
  return parsed.data;
}
