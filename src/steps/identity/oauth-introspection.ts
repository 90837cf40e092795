import * as v from 'valibot';
import { createHash } from 'node:crypto';
import { defineStep, type Flow, type StepOutcome } from '../step.js';
import { headerSafe, stepError } from '../reply.js';
import { HttpUrl } from '../sub-request.js';
import { IdentityFields, claimHeaders, identityApplier } from './claims.js';
import { IntrospectionCache, type Introspected } from './introspection-cache.js';
import { EndpointOutage } from './endpoint-outage.js';
import { EndpointUnreachable, introspector } from './introspection-client.js';
import { claimsKeeper } from './introspection-claims.js';

const Seconds = (max: number, fallback: number) => v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(max)), fallback);

/** RFC 6750 §2.1's b64token, bounded: a longer one is no token this step asks about. */
const BEARER = /^Bearer ([A-Za-z0-9\-._~+/]{1,4096}=*)$/i;

/**
 * Opaque bearer tokens checked at the provider's RFC 7662 introspection endpoint, the
 * answers cached per worker by the token's sha256. See `details` for the behaviour.
 */
export const oauthIntrospection = defineStep({
  code: 'oauth-introspection',
  summary: 'Check an opaque bearer token at an OAuth 2.0 introspection endpoint (RFC 7662), cached, with fail static',
  details:
    "`url` is the provider's introspection endpoint itself (no discovery), held to the tenant's upstream allow-list at publish and at connect time. The step authenticates as `clientId` with client_secret_basic; the secret comes from `clientSecretEnv`, an environment variable of the gateway that worker.json `secrets.env` allows the tenant (else `Compile.Step.SecretNotAllowed`; allowed but unset: a compile issue). Only `active: true` passes; an `exp` or `nbf` that rules the token out now, or (when `audience` is set) an `aud` that does not name it, is refused 401. Answers are cached per worker, keyed by the token's sha256: an active one for `cacheSeconds` but never past the token's `exp` (a revoked token passes at most that long), an inactive one for `negativeCacheSeconds`; at most `maxEntries` tokens (≤ 100000; the least recently used go first) and 32 MiB per step; an entry keeps only the claims the step reads (`sub`, `exp`, `nbf`, `aud` when `audience` is set, `scope`/`scp` when `requiredScopes` is, the `claims` and `requiredClaims` names), and an answer whose kept claims serialize over 4 KiB still decides its request but is not cached (that token is asked about every time); requests with the same uncached token share one call. When the endpoint cannot be asked (no connection, no answer within `timeoutMs`, a 5xx), a token whose last active answer is younger than `maxStaleSeconds` (default 0: off) and not expired still passes (fail static); any other gets 503, as does every token when the endpoint answers 4xx or something that is not RFC 7662 (a misconfiguration fail static does not cover). The token's `sub` goes upstream in `subjectHeader`, chosen claims in their headers (`claims`); a client's own copies of those headers never do. Counted in `switchyard_introspection_calls_total` and `switchyard_introspection_fail_static_total`.",
  statuses: [
    { status: 401, when: 'no bearer token, or one the endpoint says is not active (WWW-Authenticate: Bearer)' },
    { status: 403, when: 'the token lacks a required scope or claim' },
    { status: 503, when: 'the endpoint cannot be asked and the token has no recent active answer (Svc.Data.AuthUnavailable)' },
  ],
  example: {
    url: 'https://id.example.com/oauth2/introspect',
    clientId: 'gateway',
    clientSecretEnv: 'INTROSPECTION_SECRET',
    cacheSeconds: 30,
    maxStaleSeconds: 300,
    requiredScopes: ['orders:read'],
    claims: { client_id: 'x-client-id', scope: 'x-scope' },
  },
  schema: v.strictObject({
    url: HttpUrl,
    clientId: v.pipe(v.string(), v.minLength(1), v.maxLength(256)),
    clientSecretEnv: v.pipe(v.string(), v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name')),
    tokenTypeHint: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9_.-]{1,64}$/, 'must be a token type name'))),
    audience: v.optional(v.pipe(v.string(), v.minLength(1))),
    subjectHeader: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9-]+$/, 'must be a header name'), v.toLowerCase()), 'x-consumer-id'),
    cacheSeconds: Seconds(86_400, 30),
    negativeCacheSeconds: Seconds(3_600, 5),
    maxStaleSeconds: Seconds(86_400, 0),
    maxEntries: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100_000)), 10_000),
    timeoutMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(60_000)), 2_000),
    ...IdentityFields,
  }),
  ownedHeaders: (s) => [s.subjectHeader, ...claimHeaders(s)],
  envRefs: (s) => [{ pointer: '/clientSecretEnv', name: s.clientSecretEnv }],
  urlRefs: (s) => [{ pointer: '/url', url: s.url }],
  create(s, ctx) {
    const secret = process.env[s.clientSecretEnv];
    // Read from the gateway's environment (workers inherit the supervisor's): the trial build reports it unset.
    if (!secret) throw new Error(`environment variable ${s.clientSecretEnv} (clientSecretEnv) is not set`);
    const ask = introspector(ctx.env, ctx.tenant, { url: s.url, clientId: s.clientId, clientSecret: secret, timeoutMs: s.timeoutMs, tokenTypeHint: s.tokenTypeHint });
    const where = { step: 'oauth-introspection', tenant: ctx.tenant, route: ctx.route, url: s.url };
    const policy = { cacheMs: s.cacheSeconds * 1000, negativeMs: s.negativeCacheSeconds * 1000, maxStaleMs: s.maxStaleSeconds * 1000, maxEntries: s.maxEntries };
    // Kept across publishes while the route's step and its settings are unchanged (step-states.ts).
    const { cache, outage } = ctx.state(() => ({ cache: new IntrospectionCache(policy), outage: new EndpointOutage(ctx.env.log, where) }));
    const count = ctx.counters?.introspection.bind(ctx.counters) ?? (() => {});
    const apply = identityApplier(s);
    const keep = claimsKeeper(s);
    const missing = stepError('Svc.Data.Unauthenticated', 'A bearer token is required', { 'www-authenticate': 'Bearer' });
    const invalid = stepError('Svc.Data.Unauthenticated', 'The bearer token is not active', { 'www-authenticate': 'Bearer error="invalid_token"' });
    const unavailable = stepError('Svc.Data.AuthUnavailable', 'The token introspection endpoint could not be asked');
    const audience = s.audience;

    /** One call per token at a time (the cache's single-flight): the answer is cached and counted once. */
    const call = async (key: string, token: string, flow: Flow): Promise<Introspected> => {
      try {
        const answer = keep(await ask(token, Date.now(), flow.traceCall('POST', s.url)));
        const now = Date.now();
        cache.put(key, answer, now);
        outage.recovered(now);
        count(answer.active ? 'active' : 'inactive');
        return answer;
      } catch (err) {
        count('error');
        outage.failed((err as Error).message, Date.now());
        throw err;
      }
    };

    const decide = (flow: Flow, a: Introspected): StepOutcome => {
      if (!a.active) return invalid;
      if (audience !== undefined && !audienceHolds(a.claims.aud, audience)) return invalid;
      const refused = apply(flow, a.claims);
      if (refused !== undefined) return refused;
      const sub = a.claims.sub;
      if (typeof sub === 'string' && sub !== '') {
        flow.vars.consumer = sub;
        flow.setHeader(s.subjectHeader, headerSafe(sub));
      }
      return undefined;
    };

    /** Fail static: the last active answer when the endpoint could not be reached and that answer is recent enough; else null (503). */
    const staleFor = (key: string, err: unknown): Introspected | null => {
      const last = err instanceof EndpointUnreachable ? cache.stale(key, Date.now()) : null;
      if (last === null) {
        count('unavailable');
        outage.refusedUnavailable();
      } else {
        count('stale');
        outage.servedStale();
      }
      return last;
    };

    return (flow) => {
      const m = BEARER.exec(flow.req.header('authorization') ?? '');
      if (m === null) return missing;
      const token = m[1]!;
      // The token itself is never a key: only its hash is kept, and never logged.
      const key = createHash('sha256').update(token).digest('base64url');
      const known = cache.fresh(key, Date.now());
      if (known !== null) return decide(flow, known); // a cached answer costs no promise
      return cache.once(key, () => call(key, token, flow)).then(
        (a) => decide(flow, a),
        (err: unknown) => {
          const last = staleFor(key, err);
          return last === null ? unavailable : decide(flow, last);
        },
      );
    };
  },
});

/** RFC 7662 §2.2 `aud`: a string or a list of strings. */
function audienceHolds(aud: unknown, wanted: string): boolean {
  return aud === wanted || (Array.isArray(aud) && aud.includes(wanted));
}
