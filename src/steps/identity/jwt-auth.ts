import * as v from 'valibot';
import { createLocalJWKSet, type JWTPayload, type JWTVerifyGetKey, type JWTVerifyOptions } from 'jose';
import { createSecretKey } from 'node:crypto';
import { defineStep, type Flow, type StepOutcome } from '../step.js';
import { headerSafe, stepError } from '../reply.js';
import { claimHeaders, identityApplier, IdentityFields } from './claims.js';
import { checkPublicJwk } from './public-jwk.js';
import { discovers, isHttpUrl, keySourceUrls, KeySourceFields, remoteKeySource, usesPublicKeys } from './key-source.js';
import { verifyToken } from './verify-token.js';
import { VerifiedTokens } from './verified-tokens.js';
import type { HeldKeySet } from './key-set-view.js';
import { shownUrl } from '../../shared/shown-url.js';

const ALGORITHMS = ['HS256', 'RS256', 'ES256', 'PS256', 'EdDSA'] as const;
const BEARER = /^Bearer ([A-Za-z0-9._~+/=-]+)$/i;
/** A remote set not held (a worker outside the gateway, or a source dropped). */
const NO_KEYS: HeldKeySet = { version: -1, state: 'expired', keys: null };

/**
 * Bearer JWTs verified with `jose`: HS256 with a shared secret (from an environment
 * variable, never the config), the others against a JWKS given inline, fetched from
 * `jwksUri`, or discovered from `issuer`. Remote key sets are fetched by the supervisor and
 * pushed to the workers (contracts/key-sets.ts); the step only reads them.
 */
export const jwtAuth = defineStep({
  code: 'jwt-auth',
  summary: 'Verify a bearer JWT (HS256, RS256, ES256, PS256, EdDSA) against a secret, an inline JWKS, a jwksUri or an issuer\'s discovery',
  details:
    '`HS256` needs `secretEnv`, the name of an environment variable of the gateway (the supervisor\'s, which workers inherit) that worker.json `secrets.env` allows the tenant; any other name is refused (`Compile.Step.SecretNotAllowed`, the same whether the variable exists or not), and an allowed but unset variable is a compile issue. ' +
    'The other algorithms need keys: `jwks` inline (every key a public key Node can import, RSA keys of at least 2048 bits), or `jwksUri`, or, with neither, `issuer` (an http(s) URL), whose JWKS is found by OpenID discovery (`<issuer>/.well-known/openid-configuration`; its `issuer` must be the configured one). ' +
    'Fetched keys: the supervisor fetches each (tenant, URL) once for the node and pushes the set to the workers; every URL, the discovered `jwks_uri` included, goes through the tenant\'s upstream allow-list (`Compile.Step.UrlDenied` for a literal address, refused at connect time for a name). The set is kept for its Cache-Control max-age / Expires, within [`minRefreshSeconds`, min(1 h, `maxStaleSeconds` / 2)] (5 min without headers). A token naming an unknown `kid` makes the worker ask for a fetch and wait for it, up to 2 s, when the node may fetch within that time (at most one fetch per `minRefreshSeconds` for the node); otherwise it is refused at once with the keys held. The first requests of a source not fetched yet wait for its first fetch, up to 2 s. A provider that cannot be reached leaves the last keys serving (stale) until `maxStaleSeconds` after the last successful fetch, then the route answers 503 `Svc.Data.AuthUnavailable` until a fetch succeeds. ' +
    'Checked: the signature, `exp` (required), `nbf` and `iat` (not in the future) with `clockSkewSeconds`, `issuer`, `audience` (one of the list). A token without `kid` is tried against every key of its algorithm (key rotation). The token\'s `sub` must be a string (else 401); then `requiredScopes` (403 with WWW-Authenticate insufficient_scope) and `requiredClaims` (403); only a token that passes them sends its `sub` upstream in `subjectHeader` and its `claims` mapping to headers (a refused token under failureStrategy Continue sets none). The gateway owns `subjectHeader` and the mapped headers: a client\'s own values never go upstream.',
  statuses: [
    { status: 401, when: 'no token, or a token that fails verification' },
    { status: 403, when: 'a valid token without a required scope or claim' },
    { status: 503, when: 'the key set could not be fetched (never, or past maxStaleSeconds)' },
  ],
  example: {
    algorithms: ['RS256', 'ES256'],
    issuer: 'https://id.example.com',
    audience: ['api', 'https://api.example.com'],
    clockSkewSeconds: 30,
    requiredScopes: ['orders:read'],
    claims: { email: 'x-user-email' },
  },
  schema: v.pipe(
    v.strictObject({
      algorithms: v.pipe(v.array(v.picklist(ALGORITHMS)), v.minLength(1)),
      secretEnv: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/))),
      jwks: v.optional(v.strictObject({ keys: v.pipe(v.array(v.record(v.string(), v.unknown())), v.minLength(1)) })),
      ...KeySourceFields,
      issuer: v.optional(v.pipe(v.string(), v.maxLength(2048))),
      audience: v.optional(v.union([v.string(), v.pipe(v.array(v.string()), v.minLength(1), v.maxLength(32))])),
      clockSkewSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(600)), 30),
      subjectHeader: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9-]+$/), v.toLowerCase()), 'x-consumer-id'),
      ...IdentityFields,
    }),
    v.check((s) => !s.algorithms.includes('HS256') || s.secretEnv !== undefined, 'HS256 needs secretEnv'),
    v.check((s) => !usesPublicKeys(s.algorithms) || s.jwks !== undefined || s.jwksUri !== undefined || s.issuer !== undefined, 'RS256/ES256/PS256/EdDSA need jwks, jwksUri, or issuer (discovery)'),
    v.check((s) => s.jwks === undefined || s.jwksUri === undefined, 'jwks and jwksUri exclude each other'),
    v.check((s) => !discovers(s) || isHttpUrl(s.issuer!), 'issuer: discovery (no jwks, no jwksUri) needs an http(s) URL without credentials'),
  ),
  ownedHeaders: (s) => [s.subjectHeader, ...claimHeaders(s)],
  envRefs: (s) => (s.secretEnv ? [{ pointer: '/secretEnv', name: s.secretEnv }] : []),
  urlRefs: (s) => keySourceUrls(s),
  keySources: (s, tenant) => {
    const source = remoteKeySource(s, tenant);
    return source ? [source] : [];
  },
  create(s, ctx) {
    const secret = s.secretEnv ? process.env[s.secretEnv] : undefined;
    // Read from the gateway's environment (the supervisor's, which workers inherit): unset,
    // every HS256 token would be refused; the compiler's trial build reports it instead.
    if (s.secretEnv && !secret) throw new Error(`environment variable ${s.secretEnv} (secretEnv) is not set`);
    if (s.jwks) for (const k of s.jwks.keys) checkPublicJwk(k); // throws: the trial build reports it
    const hmac = secret ? createSecretKey(Buffer.from(secret, 'utf8')) : null;
    const inline: HeldKeySet = { version: 0, state: 'fresh', keys: s.jwks ? createLocalJWKSet(s.jwks as Parameters<typeof createLocalJWKSet>[0]) : null };
    const remote = remoteKeySource(s, ctx.tenant);
    const keySets = ctx.env.keySets;
    const options: JWTVerifyOptions = {
      algorithms: s.algorithms,
      ...(s.issuer !== undefined ? { issuer: s.issuer } : {}),
      ...(s.audience !== undefined ? { audience: s.audience } : {}),
      clockTolerance: s.clockSkewSeconds,
      requiredClaims: ['exp'],
    };
    // What admit reads of a payload: the subject, the scopes, the required and mapped claims.
    const verified = new VerifiedTokens([...new Set(['sub', 'exp', 'scope', 'scp', ...Object.keys(s.requiredClaims), ...Object.keys(s.claims)])]);
    const apply = identityApplier(s);
    const denied = stepError('Svc.Data.Unauthenticated', 'A valid bearer token is required', { 'www-authenticate': 'Bearer' });
    const unavailable = stepError('Svc.Data.AuthUnavailable', 'The keys to verify the token could not be fetched', { 'retry-after': '5' });
    /** The key set to verify with now: inline, or the pushed one (waiting, bounded, for a first fetch). */
    const currentSet = async (): Promise<HeldKeySet | undefined> => {
      if (remote === null) return inline;
      const held = keySets?.get(remote.id);
      return held === undefined || held.state === 'pending' ? keySets?.refresh(remote.id) : held;
    };
    const keyOf = (set: HeldKeySet): JWTVerifyGetKey => (header, token) => {
      if (header.alg === 'HS256') {
        if (!hmac) throw new Error('no HS256 secret');
        return hmac;
      }
      if (!set.keys) throw new Error('no keys');
      return set.keys(header, token);
    };
    /** Verifies a token not in the cache: waits (bounded) for keys when the set is not held or lacks its kid. */
    const verifyAfresh = async (flow: Flow, auth: string, token: string): Promise<StepOutcome> => {
      // Outside a worker (explain's dry run) no set is pushed: say so rather than answer 503.
      if (remote !== null && keySets === undefined) throw new Error(`its keys come from ${shownUrl(remote.url)}, fetched by the supervisor for the workers; explain does not fetch them`);
      let set = (await currentSet()) ?? NO_KEYS;
      // No keys to verify with (never fetched, or expired): 503, unless a secret may still verify an HS256 token.
      if (!set.keys && !hmac) return unavailable;
      let outcome = await verifyToken(token, keyOf(set), options, s.clockSkewSeconds);
      if (outcome === 'unknown-key' && remote !== null) {
        // A kid this worker's set lacks (a rotation): ask for a fetch, and try once more on what it brings.
        const next = await keySets?.refresh(remote.id);
        if (next?.keys && next.version !== set.version) outcome = await verifyToken(token, keyOf((set = next)), options, s.clockSkewSeconds);
      }
      if (typeof outcome === 'string') return denied;
      verified.set(auth, outcome, (outcome.exp! + s.clockSkewSeconds) * 1000, set.version);
      return admit(flow, outcome);
    };
    const admit = (flow: Flow, payload: JWTPayload): StepOutcome => {
      if (payload.sub !== undefined && typeof payload.sub !== 'string') return denied; // RFC 7519 §4.1.2: a string
      // Checks first: a refused token (its 403 swallowed under failureStrategy Continue) sets no identity.
      const refused = apply(flow, payload);
      if (refused !== undefined) return refused;
      // The subject header carries the token's subject or nothing (ownedHeaders: the route drops the client's own).
      if (payload.sub) {
        flow.vars.consumer = payload.sub;
        flow.setHeader(s.subjectHeader, headerSafe(payload.sub));
      }
      return undefined;
    };
    // A token verified lately with the set held now is answered without a promise (the common case).
    // The cache is keyed by the whole Authorization value (up to 4 KiB): a hit was parsed when it was verified.
    return (flow) => {
      const auth = flow.req.header('authorization');
      if (auth === undefined) return denied;
      const set = remote === null ? inline : keySets?.get(remote.id);
      const payload = set !== undefined && set.state !== 'pending' ? verified.get(auth, set.version) : undefined;
      if (payload !== undefined) return admit(flow, payload);
      const m = BEARER.exec(auth);
      return m === null ? denied : verifyAfresh(flow, auth, m[1]!);
    };
  },
});
