import * as v from 'valibot';
import { defineStep, type StepReply } from './step.js';

const Settings = v.strictObject({
  requestsPerSecond: v.pipe(v.number(), v.gtValue(0), v.maxValue(1_000_000)),
  burst: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(10_000_000)),
});

function tooMany(retryAfterSeconds: number): StepReply {
  const retryAfter = String(Math.max(1, Math.ceil(retryAfterSeconds)));
  return {
    status: 429,
    headers: { 'content-type': 'application/json', 'retry-after': retryAfter },
    body: JSON.stringify({ code: 'Svc.Data.RateLimited', message: 'Rate limit exceeded', retryAfter: Number(retryAfter) }),
  };
}

/**
 * Token bucket of `burst` tokens refilled at `requestsPerSecond`, one per route for the
 * whole node (not per worker): tokens are leased from the supervisor, so the count
 * stays exact across workers. A request with a local token passes synchronously.
 */
export const rateLimit = defineStep({
  code: 'rate-limit',
  summary: 'Token bucket per route across all workers; 429 with Retry-After when empty',
  statuses: [{ status: 429, when: 'the bucket is empty (Retry-After says when the next token is due)' }],
  example: { requestsPerSecond: 10, burst: 20 },
  schema: Settings,
  create(settings, { bucket, env }) {
    const { requestsPerSecond, burst } = settings;
    return () => {
      const r = env.rateLimits.acquire(bucket, requestsPerSecond, burst);
      if (r === true) return undefined;
      if ('then' in r) return r.then((x) => (x === true ? undefined : tooMany(x.retryAfterSeconds)));
      return tooMany(r.retryAfterSeconds);
    };
  },
});
