import * as v from 'valibot';
import { createLocalJWKSet, jwtVerify, type JWTPayload, type JWTVerifyGetKey, type JWTVerifyOptions, type KeyObject } from 'jose';
import { createPublicKey, createSecretKey } from 'node:crypto';
import { defineStep, type StepOutcome } from './step.js';
import { headerSafe, stepError } from './reply.js';

/**
 * Bearer JWTs verified with `jose`: HS256 with a shared secret (from an environment
 * variable, never the config), or RS256/ES256 against a JWKS given inline. Issuer,
 * audience and expiry (with clock skew) are checked; the subject goes upstream.
 */
export const jwtAuth = defineStep({
  code: 'jwt-auth',
  summary: 'Verify a bearer JWT (HS256, RS256, ES256): signature, issuer, audience, expiry',
  details: '`HS256` needs `secretEnv`, the name of an environment variable of the gateway (the supervisor\'s, which workers inherit) that worker.json `secrets.env` allows the tenant; any other name is refused (`Compile.Step.SecretNotAllowed`, the same whether the variable exists or not), and an allowed but unset variable is a compile issue. `RS256`/`ES256` need `jwks`: at least one key, every key a public key Node can import, RSA keys of at least 2048 bits (a private key, an `oct` key, a short RSA key or a malformed one is a compile issue). A token without `kid` is tried against every key of its algorithm (key rotation). The token\'s `sub` (a string, else 401) goes upstream in `subjectHeader`; a client\'s own value of that header never does.',
  statuses: [{ status: 401, when: 'no token, or a token that fails verification' }],
  example: {
    algorithms: ['ES256'],
    jwks: { keys: [{ kty: 'EC', crv: 'P-256', kid: 'id-2026', alg: 'ES256', x: 'HT1QE0lk1mwOgo5KKJC6ikAhR_lLWowP_QNcrRmq4LQ', y: 'b4nbbdY5P5-ROqRpT2GYivuQ_f5ANlKd7Z43wRy5CLI' }] },
    issuer: 'https://id.example.com',
    audience: 'api',
    clockSkewSeconds: 30,
  },
  schema: v.pipe(
    v.strictObject({
      algorithms: v.pipe(v.array(v.picklist(['HS256', 'RS256', 'ES256'])), v.minLength(1)),
      secretEnv: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/))),
      jwks: v.optional(v.strictObject({ keys: v.pipe(v.array(v.record(v.string(), v.unknown())), v.minLength(1)) })),
      issuer: v.optional(v.string()),
      audience: v.optional(v.string()),
      clockSkewSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(600)), 30),
      subjectHeader: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9-]+$/)), 'x-consumer-id'),
    }),
    v.check((s) => !s.algorithms.includes('HS256') || s.secretEnv !== undefined, 'HS256 needs secretEnv'),
    v.check((s) => s.algorithms.every((a) => a === 'HS256') || s.jwks !== undefined, 'RS256/ES256 need jwks'),
  ),
  ownedHeaders: (s) => [s.subjectHeader],
  envRefs: (s) => (s.secretEnv ? [{ pointer: '/secretEnv', name: s.secretEnv }] : []),
  create(s) {
    const secret = s.secretEnv ? process.env[s.secretEnv] : undefined;
    // Read from the gateway's environment (the supervisor's, which workers inherit): unset,
    // every HS256 token would be refused; the compiler's trial build reports it instead.
    if (s.secretEnv && !secret) throw new Error(`environment variable ${s.secretEnv} (secretEnv) is not set`);
    if (s.jwks) for (const k of s.jwks.keys) publicJwk(k); // throws: the trial build reports it
    const jwks = s.jwks ? createLocalJWKSet(s.jwks as Parameters<typeof createLocalJWKSet>[0]) : null;
    const hmac = secret ? createSecretKey(Buffer.from(secret, 'utf8')) : null;
    const key: JWTVerifyGetKey = async (header, token) => {
      if (header.alg === 'HS256') {
        if (!hmac) throw new Error('no HS256 secret');
        return hmac;
      }
      if (!jwks) throw new Error('no JWKS');
      return jwks(header, token);
    };
    const options: JWTVerifyOptions = {
      algorithms: s.algorithms,
      ...(s.issuer !== undefined ? { issuer: s.issuer } : {}),
      ...(s.audience !== undefined ? { audience: s.audience } : {}),
      clockTolerance: s.clockSkewSeconds,
      requiredClaims: ['exp'],
    };
    const denied = stepError('Svc.Data.Unauthenticated', 'A valid bearer token is required', { 'www-authenticate': 'Bearer' });
    return async (flow): Promise<StepOutcome> => {
      const auth = flow.req.header('authorization');
      const m = auth ? /^Bearer ([A-Za-z0-9._~+/=-]+)$/i.exec(auth) : null;
      if (!m) return denied;
      try {
        const payload = await verify(m[1]!, key, options);
        if (payload.sub !== undefined && typeof payload.sub !== 'string') return denied; // RFC 7519 §4.1.2: a string
        // The subject header carries the token's subject or nothing (ownedHeaders: the route drops the client's own).
        if (payload.sub) {
          flow.vars.consumer = payload.sub;
          flow.setHeader(s.subjectHeader, headerSafe(payload.sub));
        }
        return undefined;
      } catch {
        return denied;
      }
    };
  },
});

/** A JWKS member must be a public key Node can import: a private or symmetric one is refused. */
function publicJwk(k: Record<string, unknown>): void {
  if (k.kty === 'oct' || 'd' in k) throw new Error(`jwks: key ${JSON.stringify(k.kid ?? k.kty)} must be a public key`);
  let bits: number | undefined;
  try {
    bits = createPublicKey({ key: k as never, format: 'jwk' }).asymmetricKeyDetails?.modulusLength;
  } catch (err) {
    throw new Error(`jwks: key ${JSON.stringify(k.kid ?? k.kty)} cannot be imported: ${(err as Error).message}`);
  }
  // jose refuses RSA keys under 2048 bits when verifying: such a key could never pass a token.
  if (k.kty === 'RSA' && (bits ?? 0) < 2048) throw new Error(`jwks: RSA key ${JSON.stringify(k.kid ?? 'RSA')} has ${bits} bits; at least 2048 are needed`);
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
