import * as v from 'valibot';
import { createLocalJWKSet, jwtVerify, type JWTVerifyGetKey } from 'jose';
import { createSecretKey } from 'node:crypto';
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
  details: '`HS256` needs `secretEnv`, the name of an environment variable of the gateway (the supervisor\'s, which workers inherit); an unset variable is a compile issue. `RS256`/`ES256` need `jwks`. The token\'s `sub` goes upstream in `subjectHeader`; a client\'s own value of that header never does.',
  statuses: [{ status: 401, when: 'no token, or a token that fails verification' }],
  example: { algorithms: ['RS256'], jwks: { keys: [] }, issuer: 'https://id.example.com', audience: 'api', clockSkewSeconds: 30 },
  schema: v.pipe(
    v.strictObject({
      algorithms: v.pipe(v.array(v.picklist(['HS256', 'RS256', 'ES256'])), v.minLength(1)),
      secretEnv: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/))),
      jwks: v.optional(v.strictObject({ keys: v.array(v.record(v.string(), v.unknown())) })),
      issuer: v.optional(v.string()),
      audience: v.optional(v.string()),
      clockSkewSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(600)), 30),
      subjectHeader: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9-]+$/)), 'x-consumer-id'),
    }),
    v.check((s) => !s.algorithms.includes('HS256') || s.secretEnv !== undefined, 'HS256 needs secretEnv'),
    v.check((s) => s.algorithms.every((a) => a === 'HS256') || s.jwks !== undefined, 'RS256/ES256 need jwks'),
  ),
  ownedHeaders: (s) => [s.subjectHeader],
  create(s) {
    const secret = s.secretEnv ? process.env[s.secretEnv] : undefined;
    // Read from the gateway's environment (the supervisor's, which workers inherit): unset,
    // every HS256 token would be refused; the compiler's trial build reports it instead.
    if (s.secretEnv && !secret) throw new Error(`environment variable ${s.secretEnv} (secretEnv) is not set`);
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
    const denied = stepError(401, 'Svc.Data.Unauthenticated', 'A valid bearer token is required', { 'www-authenticate': 'Bearer' });
    return async (flow): Promise<StepOutcome> => {
      const auth = flow.req.header('authorization');
      const m = auth ? /^Bearer ([A-Za-z0-9._~+/=-]+)$/i.exec(auth) : null;
      if (!m) return denied;
      try {
        const { payload } = await jwtVerify(m[1]!, key, {
          algorithms: s.algorithms,
          ...(s.issuer !== undefined ? { issuer: s.issuer } : {}),
          ...(s.audience !== undefined ? { audience: s.audience } : {}),
          clockTolerance: s.clockSkewSeconds,
          requiredClaims: ['exp'],
        });
        // The subject header carries the token's subject or nothing: never the client's own.
        flow.removeHeader(s.subjectHeader);
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
