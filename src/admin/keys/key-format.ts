import { createHash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * Tenant sub-key plaintext: `syk_` + 32 random base62 characters (≈ 190 bits) + a
 * 6-character base62 CRC-32 of everything before it. The checksum lets a mistyped,
 * truncated or invented token be refused without touching the store, and the prefix
 * makes leaked keys easy to find with secret scanners.
 */
export const SUB_KEY_PREFIX = 'syk_';
const RANDOM_CHARS = 32;
const CHECK_CHARS = 6;
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SHAPE = new RegExp(`^${SUB_KEY_PREFIX}[0-9A-Za-z]{${RANDOM_CHARS + CHECK_CHARS}}$`);

/** Uniform base62 characters by rejection sampling (bytes ≥ 248 are dropped, no modulo bias). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      if (b < 248 && out.length < length) out += ALPHABET[b % 62];
    }
  }
  return out;
}

function checksum(body: string): string {
  let n = crc32(body);
  let out = '';
  for (let i = 0; i < CHECK_CHARS; i++) {
    out = ALPHABET[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

export function newSubKey(): string {
  const body = SUB_KEY_PREFIX + randomBase62(RANDOM_CHARS);
  return body + checksum(body);
}

/** Not even the prefix stays: secret scanners and the no-plaintext test look for it. */
export const REDACTED = '[redacted sub-key]';
const IN_TEXT = new RegExp(`${SUB_KEY_PREFIX}[0-9A-Za-z]{${RANDOM_CHARS + CHECK_CHARS}}(?![0-9A-Za-z])`, 'g');

/**
 * `text` with every sub-key plaintext in it replaced by REDACTED: for what the
 * admin port logs and audits of a path. An operator holding a leaked token naturally
 * pastes it where a key id goes (`key revoke syk_…`), and the path then carried it into
 * the log and the audit trail.
 */
export function redactSubKeys(text: string): string {
  return text.includes(SUB_KEY_PREFIX) ? text.replace(IN_TEXT, REDACTED) : text;
}

/** The token claims to be a sub-key (any token with the prefix is judged as one). */
export function isSubKeyShaped(token: string): boolean {
  return token.startsWith(SUB_KEY_PREFIX);
}

/** Shape and checksum hold: only then is the store asked. */
export function hasValidChecksum(token: string): boolean {
  if (!SHAPE.test(token)) return false;
  const cut = token.length - CHECK_CHARS;
  return checksum(token.slice(0, cut)) === token.slice(cut);
}

/** What the store keeps instead of the plaintext. */
export function fingerprint(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}
