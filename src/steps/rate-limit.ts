import { createHash } from 'node:crypto';
import * as v from 'valibot';
import { defineStep, type Flow, type StepReply } from './step.js';
import { stepError } from './reply.js';

const Settings = v.strictObject({
  requestsPerSecond: v.pipe(v.number(), v.gtValue(0), v.maxValue(1_000_000)),
  burst: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(10_000_000)),
  /** One bucket for the route, one per client address (the request's clientAddress), or one per value of a header. */
  key: v.optional(v.union([v.picklist(['route', 'ip']), v.strictObject({ header: v.pipe(v.string(), v.regex(/^[A-Za-z0-9-]+$/)) })]), 'route'),
  /** RateLimit-Limit / -Remaining / -Reset on every answer of the route. */
  headers: v.optional(v.boolean(), true),
  /** `node`: exact across this node's workers; `cluster`: one bucket for every node, in worker.json's Redis. */
  scope: v.optional(v.picklist(['node', 'cluster']), 'node'),
  /** With scope cluster, when Redis cannot be asked: let requests through, or answer 503. */
  onStoreDown: v.optional(v.picklist(['allow', 'deny']), 'allow'),
});

/** Longer header values count by their SHA-256: a bucket's key stays small whatever a client sends (up to 16 KB). */
const LONGEST_KEPT = 64;

function headerKey(value: string | undefined): string {
  if (value === undefined) return '';
  return value.length <= LONGEST_KEPT ? value : `#${createHash('sha256').update(value).digest('base64url')}`;
}

/** The 429 envelope; its traceId is the request's id, filled in when it is sent (reply.ts). */
function tooMany(retryAfterSeconds: number, burst: number, headers: boolean): StepReply {
  const retryAfter = String(Math.max(1, Math.ceil(retryAfterSeconds)));
  const limits: Record<string, string> = headers ? { 'ratelimit-limit': String(burst), 'ratelimit-remaining': '0', 'ratelimit-reset': retryAfter } : {};
  return stepError('Svc.Data.RateLimited', undefined, { 'retry-after': retryAfter, ...limits }, { retryAfter: Number(retryAfter) });
}

/**
 * Token bucket of `burst` tokens refilled at `requestsPerSecond`, one per route for the
 * whole node (not per worker): tokens are leased from the supervisor, so the count
 * stays exact across workers. A request with a local token passes synchronously.
 */
export const rateLimit = defineStep({
  code: 'rate-limit',
  summary: 'Token bucket per route across all workers; 429 with Retry-After when empty',
  details: 'With `scope: "node"` (the default) the bucket is node-wide (all workers share it, exactly); with `scope: "cluster"` it is one bucket for every node of the fleet, kept in worker.json `redis` (docs/fleet.md): nodes take small batches of tokens from it, so a request waits on Redis only when its worker has none, and a lease of one token near empty keeps the count exact. When Redis cannot be asked, `onStoreDown` decides: `allow` (the default) lets requests through, `deny` answers 503 `Svc.Data.RateLimitUnavailable`; the gateway logs it and counts it (`switchyard_rate_limit_store_down_total`). The bucket is keyed by the route, the step and its settings, and by `key`: the route (default), the client address (`ip`: the socket peer, or behind a proxy in worker.json `trustedProxies` the client it reports in X-Forwarded-For) or a request header (`{"header": name}`). With `headers` (default true) answers carry `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`; a 429 always carries `Retry-After`.',
  statuses: [
    { status: 429, when: 'the bucket is empty (Retry-After says when the next token is due); also, for 1 s, when the supervisor did not answer a token lease within 2 s' },
    { status: 503, when: 'scope cluster with onStoreDown deny, and Redis could not be asked (Svc.Data.RateLimitUnavailable)' },
  ],
  example: { requestsPerSecond: 10, burst: 20, key: 'ip' },
  schema: Settings,
  needsRedis: (s) => s.scope === 'cluster',
  create(settings, { bucket, env }) {
    const { requestsPerSecond, burst, key, headers, scope, onStoreDown } = settings;
    const cluster = scope === 'cluster' ? { onStoreDown } : undefined;
    const storeDown = stepError('Svc.Data.RateLimitUnavailable', undefined, { 'retry-after': '1' });
    const refused = (d: { retryAfterSeconds: number; unavailable?: true }) => (d.unavailable ? storeDown : tooMany(d.retryAfterSeconds, burst, headers));
    const limits = env.rateLimits;
    const keyOf: (flow: Flow) => string =
      key === 'route' ? () => bucket : key === 'ip' ? (f) => `${bucket}|ip:${f.req.clientAddress}` : (f) => `${bucket}|h:${headerKey(f.req.header(key.header.toLowerCase()))}`;
    const limitHeader = String(burst);
    const passed = (flow: Flow, b: string): undefined => {
      if (headers) {
        const remaining = limits.remaining(b);
        const reset = String(Math.ceil((burst - remaining) / requestsPerSecond));
        flow.addResponseHeader('ratelimit-limit', limitHeader);
        flow.addResponseHeader('ratelimit-remaining', String(remaining));
        flow.addResponseHeader('ratelimit-reset', reset);
      }
      return undefined;
    };
    return (flow) => {
      const b = keyOf(flow);
      const r = limits.acquire(b, requestsPerSecond, burst, cluster);
      if (r === true) return passed(flow, b);
      if ('then' in r) return r.then((x) => (x === true ? passed(flow, b) : refused(x)));
      return refused(r);
    };
  },
});
