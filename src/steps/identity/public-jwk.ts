import { createPublicKey } from 'node:crypto';

/**
 * A JWKS member the gateway may verify with: a public key Node can import, RSA keys of at
 * least 2048 bits. Shared by jwt-auth's inline `jwks` (a compile issue) and the key sets the
 * supervisor fetches (such a key is left out of the set).
 */
export function checkPublicJwk(k: Record<string, unknown>): void {
  const name = JSON.stringify(k.kid ?? k.kty);
  if (k.kty === 'oct' || 'd' in k) throw new Error(`key ${name} must be a public key`);
  let bits: number | undefined;
  try {
    bits = createPublicKey({ key: k as never, format: 'jwk' }).asymmetricKeyDetails?.modulusLength;
  } catch (err) {
    throw new Error(`key ${name} cannot be imported: ${(err as Error).message}`);
  }
  // jose refuses RSA keys under 2048 bits when verifying: such a key could never pass a token.
  if (k.kty === 'RSA' && (bits ?? 0) < 2048) throw new Error(`RSA key ${name} has ${bits} bits; at least 2048 are needed`);
}

/** The keys of a fetched JWKS document worth sending to workers: signing keys that pass checkPublicJwk; at most `max`. */
export function usableKeys(doc: unknown, max = 100): Record<string, unknown>[] {
  const keys = (doc as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys)) throw new Error('not a JWKS: no "keys" list');
  const out: Record<string, unknown>[] = [];
  for (const k of keys) {
    if (typeof k !== 'object' || k === null || Array.isArray(k)) continue;
    const key = k as Record<string, unknown>;
    if (key.use !== undefined && key.use !== 'sig') continue;
    try {
      checkPublicJwk(key);
    } catch {
      continue;
    }
    out.push(key);
    if (out.length === max) break;
  }
  return out;
}
