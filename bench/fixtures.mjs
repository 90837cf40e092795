// What every bench measures the same way, shared by run.mjs (a real gateway and
// upstream), gateway.mjs (the routes it publishes) and hot-path.mjs (the worker's
// runtime with fakes): the upstream's answer, the gateway's routes with the five steps,
// the no-op package steps, and the request every target gets.
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { fileURLToPath } from 'node:url';

/** The upstream's servers (upstream.mjs's second argument, BENCH_UPSTREAM): the first is the default. */
export const UPSTREAM_KINDS = ['uws', 'node'];

/** The upstream's fixed answer body (upstream.mjs serves it; hot-path.mjs's fake upstream too). */
export const UPSTREAM_BODY = Buffer.from(JSON.stringify({ ok: true, service: 'upstream', items: [1, 2, 3] }));

/** The API key the route's key-auth accepts (the gateway only holds its SHA-256). */
export const BENCH_API_KEY = 'bench-key-0123456789';
/**
 * The RS256 key of the jwt-auth route (a fresh pair per run): its public half is the
 * route's inline JWKS, the private half signs BENCH_JWT, valid for a week from now.
 */
const JWT_KEYS = generateKeyPairSync('rsa', { modulusLength: 2048 });
export const BENCH_JWK = { ...JWT_KEYS.publicKey.export({ format: 'jwk' }), kid: 'bench-1', alg: 'RS256', use: 'sig' };
const b64url = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');
const jwtInput = `${b64url({ alg: 'RS256', typ: 'JWT', kid: 'bench-1' })}.${b64url({ sub: 'bench-user', aud: 'bench', iat: Math.floor(Date.now() / 1000), exp: Math.floor(Date.now() / 1000) + 7 * 86_400 })}`;
export const BENCH_JWT = `${jwtInput}.${sign('sha256', Buffer.from(jwtInput), JWT_KEYS.privateKey).toString('base64url')}`;

/**
 * The headers every request carries: the key and an allowed Origin (what the five steps
 * need), and the bearer token the jwt-auth route verifies (the other routes forward it).
 */
export const REQUEST_HEADERS = { 'x-api-key': BENCH_API_KEY, origin: 'https://bench.example', authorization: `Bearer ${BENCH_JWT}` };

export const FIVE_STEPS = [
  { code: 'request-id', settings: {} },
  { code: 'cors', settings: { origins: ['https://bench.example'] } },
  { code: 'key-auth', settings: { keys: [{ id: 'bench', sha256: createHash('sha256').update(BENCH_API_KEY).digest('hex') }] } },
  { code: 'rate-limit', settings: { requestsPerSecond: 1_000_000, burst: 1_000_000 } },
  { code: 'request-headers', settings: { set: { 'x-bench': '1' } } },
];

/** worker.json `steps.packages` of this checkout's gateway: the no-op package step. */
export const BENCH_STEP_PACKAGES = [fileURLToPath(new URL('./step-packages/noop/', import.meta.url))];

/** Five no-op package steps: a route's cost of package steps by themselves. */
export const FIVE_PACKAGE_STEPS = Array.from({ length: 5 }, () => ({ code: 'bench-noop' }));

/** The route that verifies the bearer token (RS256, inline JWKS: keys already held, as they are between fetches of a jwksUri). */
export const jwtRoute = (cluster) => ['bench-jwt', { cluster, pathPrefix: '/jwt', order: 10, steps: [{ code: 'jwt-auth', settings: { algorithms: ['RS256'], jwks: { keys: [BENCH_JWK] }, audience: 'bench' } }] }];

/** The route of the package steps (this checkout only: an older build loads no packages). */
export const packageStepsRoute = (cluster) => ['bench-pkg-steps', { cluster, pathPrefix: '/pkg-steps', order: 10, steps: FIVE_PACKAGE_STEPS }];

/**
 * The gateway's routes, as [name, document]: "/" → the cluster, "/direct" → a fixed
 * answer (the bare-uWS comparison), "/steps" → the same cluster behind the five steps.
 */
export function benchRoutes(cluster) {
  return [
    ['bench-cluster', { cluster, pathPrefix: '/' }],
    ['bench-direct', { directResponse: { statusCode: 200, body: 'hello' }, pathPrefix: '/direct', order: 10 }],
    ['bench-steps', { cluster, pathPrefix: '/steps', order: 10, steps: FIVE_STEPS }],
  ];
}
