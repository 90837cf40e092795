import * as v from 'valibot';
import { defineStep } from './step.js';

const IDEMPOTENT = ['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE'];

/**
 * Retries the proxy stage for idempotent requests whose body can go out again (none, or
 * one read whole by request buffering): on connection failures
 * (refused, reset, connect or header timeouts, no connection free within the cluster's
 * budget) and on the chosen statuses, up to
 * `attempts` tries in all, waiting `backoffMs`, then twice that, and so on. The last
 * attempt's answer goes to the client; nothing is sent before it is chosen.
 */
export const retry = defineStep({
  code: 'retry',
  summary: 'Retry idempotent requests on connection errors and chosen statuses, with backoff',
  details:
    "Requests without a body, or with one read whole before the upstream call (`requestBuffering`, up to `maxBytes`: 64 KiB unless set), are retried; a PUT or DELETE whose body streams (over `maxBytes`, or `maxBytes: 0`) gets a single attempt. Besides the chosen statuses, a connection failure (refused, reset, connect or header timeout) and a request that got no connection within the cluster's `connections` budget (503 `Svc.Data.UpstreamBusy`; nothing was sent) are retried. " +
    "The proxy's own re-send on a new connection and failover to another target (docs/reference.md, Clusters) come on top and do not count as attempts. " +
    "On its route this step replaces the cluster's own `retry` policy (docs/reference.md, Cluster retries): its attempts are not held to the cluster's budget, do not prefer another target, and the cluster's `perTryTimeoutMs` does not apply.",
  statuses: [],
  example: { attempts: 3, statuses: [502, 503, 504], backoffMs: 50 },
  schema: v.strictObject({
    attempts: v.pipe(v.number(), v.integer(), v.minValue(2), v.maxValue(5)),
    statuses: v.optional(v.array(v.pipe(v.number(), v.integer(), v.minValue(500), v.maxValue(599))), [502, 503, 504]),
    backoffMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(10_000)), 50),
    methods: v.optional(v.array(v.picklist(IDEMPOTENT)), IDEMPOTENT),
  }),
  create(s) {
    const policy = { attempts: s.attempts, statuses: new Set(s.statuses), backoffMs: s.backoffMs };
    const methods = new Set<string>(s.methods);
    return (flow) => {
      if (methods.has(flow.req.method)) flow.retry = policy;
      return undefined;
    };
  },
});
