/**
 * Webhook secrets: made here (`whsec_` + base64 of 24 random bytes, as
 * Standard Webhooks writes them), and kept in the log so that every
 * replica can sign. With WEBHOOK_SECRET_KEY set they are stored encrypted
 * with AES-256-GCM (`aes256gcm:` + base64 of IV, tag and ciphertext; the
 * webhook's id is the additional data, so a sealed secret cannot be moved
 * to another webhook); without it, as they are.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const SEALED = 'aes256gcm:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A new secret: `whsec_` + base64 of 24 random bytes. */
export function newSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/** A stored secret that cannot be read: sealed, and no key or another key is set. */
export class UnreadableSecretError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnreadableSecretError';
  }
}

export class SecretBox {
  /** `key`: 32 bytes (WEBHOOK_SECRET_KEY), or undefined to store secrets as they are. */
  constructor(private readonly key: Buffer | undefined) {}

  /** Whether secrets are stored encrypted. */
  get seals(): boolean {
    return this.key !== undefined;
  }

  /** The secret as the log stores it. */
  seal(secret: string, webhookId: string): string {
    if (!this.key) return secret;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(webhookId, 'utf8'));
    const encrypted = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return SEALED + Buffer.concat([iv, cipher.getAuthTag(), encrypted]).toString('base64');
  }

  /** The secret a stored one stands for (UnreadableSecretError when sealed with no key or another key). */
  open(stored: string, webhookId: string): string {
    if (!stored.startsWith(SEALED)) return stored;
    if (!this.key) throw new UnreadableSecretError('the secret is encrypted and WEBHOOK_SECRET_KEY is not set');
    const bytes = Buffer.from(stored.slice(SEALED.length), 'base64');
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, bytes.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(webhookId, 'utf8'));
      decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new UnreadableSecretError('the secret cannot be decrypted with this WEBHOOK_SECRET_KEY (was it changed?)');
    }
  }
}
