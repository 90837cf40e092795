import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** The prefix of a sealed value: the format's version, so a later one can be told apart. */
const SEALED = 'sy1.';

/**
 * The key in `secrets.keyEnv`'s variable: 32 bytes as 64 hex digits or as base64
 * (base64url too). null when the value is neither.
 */
export function parseSealingKey(value: string | undefined): Buffer | null {
  if (!value) return null;
  const text = value.trim();
  const bytes = /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
  return bytes.length === 32 ? bytes : null;
}

/**
 * AES-256-GCM for what must not reach the disk in plaintext (a `cert` entity's private
 * key). `context` (the entity's tenant/kind/name) is bound as associated data, so a sealed
 * value copied into another entity does not open.
 */
export class SecretBox {
  constructor(private readonly key: Buffer) {}

  seal(plain: string, context: string): string {
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.key, iv);
    c.setAAD(Buffer.from(context));
    const body = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
    return SEALED + Buffer.concat([iv, c.getAuthTag(), body]).toString('base64url');
  }

  /** Throws when the value was sealed with another key or for another context, or was altered. */
  open(sealed: string, context: string): string {
    if (!isSealed(sealed)) throw new Error('not a sealed value');
    const raw = Buffer.from(sealed.slice(SEALED.length), 'base64url');
    const d = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
    d.setAAD(Buffer.from(context));
    d.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([d.update(raw.subarray(28)), d.final()]).toString('utf8');
  }
}

export function isSealed(value: string): boolean {
  return value.startsWith(SEALED);
}

/** A stored secret as its user needs it: opened when sealed (which needs `box`), else as stored. */
export function openStored(stored: string, context: string, box: SecretBox | null): string {
  if (!isSealed(stored)) return stored;
  if (!box) throw new Error('the value is sealed and secrets.keyEnv is not set');
  return box.open(stored, context);
}

/** The sealing context of a `cert` entity's private key (`tenant/name`): it opens for that entity only. */
export function certKeyContext(id: string): string {
  const slash = id.indexOf('/');
  return `${id.slice(0, slash)}/cert/${id.slice(slash + 1)}`;
}

let installed: SecretBox | null = null;

/** The process's sealing key (worker.json secrets.keyEnv), set once at start: what opens `cert` keys named by clusters. */
export function installSecretBox(box: SecretBox | null): void {
  installed = box;
}

export function processSecretBox(): SecretBox | null {
  return installed;
}
