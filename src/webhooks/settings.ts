/** The webhook settings, from the configuration (see config.ts). */
import { type Config, loadConfig, secretKeyBytes } from '../config.js';

export interface WebhookSettings {
  /** Whether this server delivers (one replica of those sharing a log should). */
  readonly delivery: boolean;
  readonly allowHttp: boolean;
  readonly allowPrivateNetworks: boolean;
  readonly retryBaseMs: number;
  readonly maxAttempts: number;
  readonly timeoutMs: number;
  /** Encrypts secrets in the log (undefined: stored as they are). */
  readonly secretKey: Buffer | undefined;
}

type WebhookConfig = Pick<
  Config,
  | 'WEBHOOK_DELIVERY'
  | 'WEBHOOK_ALLOW_HTTP'
  | 'WEBHOOK_ALLOW_PRIVATE_NETWORKS'
  | 'WEBHOOK_RETRY_BASE_MS'
  | 'WEBHOOK_MAX_ATTEMPTS'
  | 'WEBHOOK_TIMEOUT_MS'
  | 'WEBHOOK_SECRET_KEY'
>;

export function webhookSettings(config: WebhookConfig): WebhookSettings {
  return {
    delivery: config.WEBHOOK_DELIVERY,
    allowHttp: config.WEBHOOK_ALLOW_HTTP,
    allowPrivateNetworks: config.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
    retryBaseMs: config.WEBHOOK_RETRY_BASE_MS,
    maxAttempts: config.WEBHOOK_MAX_ATTEMPTS,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    secretKey: config.WEBHOOK_SECRET_KEY === undefined ? undefined : secretKeyBytes(config.WEBHOOK_SECRET_KEY),
  };
}

/** The defaults, as an empty environment gives them. */
export const DEFAULT_WEBHOOK_SETTINGS: WebhookSettings = webhookSettings(loadConfig({}));
