import { jwtVerify, type JWTPayload, type JWTVerifyGetKey, type JWTVerifyOptions, type KeyObject } from 'jose';

/**
 * A token's verdict: its claims, `unknown-key` (the key set has no key for its `kid` and
 * algorithm: a rotation the worker has not seen yet), or `invalid`.
 */
export async function verifyToken(token: string, key: JWTVerifyGetKey, options: JWTVerifyOptions, skewSeconds: number): Promise<JWTPayload | 'unknown-key' | 'invalid'> {
  let payload: JWTPayload;
  try {
    payload = await verify(token, key, options);
  } catch (err) {
    return (err as { code?: string }).code === 'ERR_JWKS_NO_MATCHING_KEY' ? 'unknown-key' : 'invalid';
  }
  // jose checks `iat` only with maxTokenAge: a token issued in the future (beyond the skew) is refused here.
  if (typeof payload.iat === 'number' && payload.iat > Date.now() / 1000 + skewSeconds) return 'invalid';
  return payload;
}

/**
 * jwtVerify, and when the token names no `kid` and several keys of the JWKS fit (key
 * rotation), each of them in turn: jose reports that case as an error that iterates them.
 */
async function verify(token: string, key: JWTVerifyGetKey, options: JWTVerifyOptions): Promise<JWTPayload> {
  try {
    return (await jwtVerify(token, key, options)).payload;
  } catch (err) {
    if ((err as { code?: string }).code !== 'ERR_JWKS_MULTIPLE_MATCHING_KEYS') throw err;
    // Every candidate is tried: one that cannot verify this token (a wrong signature, or a
    // key jose will not use) must not stop the one that can.
    for await (const candidate of err as AsyncIterable<KeyObject>) {
      try {
        return (await jwtVerify(token, candidate, options)).payload;
      } catch {
        // the next key
      }
    }
    throw err;
  }
}
