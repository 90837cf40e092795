import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The string a client signs, four lines joined by '\n' (no trailing newline): the method
 * in upper case, the path with its query as sent (`/orders?id=7`), the timestamp header's
 * value, and the lower-case hex SHA-256 of the body (of zero bytes when there is none).
 */
export function signedString(method: string, pathWithQuery: string, timestamp: string, body: Buffer): string {
  return [method.toUpperCase(), pathWithQuery, timestamp, createHash('sha256').update(body).digest('hex')].join('\n');
}

/** The HMAC-SHA256 of the signed string, as raw bytes. */
export function sign(key: string, message: string): Buffer {
  return createHmac('sha256', key).update(message).digest();
}

/** A signature header's 32 bytes, from hex (64 digits) or base64 / base64url; null when it is neither. */
export function decodeSignature(value: string): Buffer | null {
  const v = value.trim();
  if (/^[0-9a-fA-F]{64}$/.test(v)) return Buffer.from(v, 'hex');
  if (!/^[A-Za-z0-9+/_-]{43}=?$/.test(v)) return null;
  const bytes = Buffer.from(v.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  return bytes.length === 32 ? bytes : null;
}

/** Compares in time independent of where the bytes differ (both are 32 bytes). */
export function sameSignature(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
