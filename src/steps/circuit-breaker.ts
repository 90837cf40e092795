import * as v from 'valibot';
import { defineStep } from './step.js';
import { stepError } from './reply.js';

/**
 * Stops sending traffic to a failing upstream. Closed: failures (status ≥ 500, including
 * the gateway's own 502/504) are counted in a sliding window; `failures` of them within
 * `windowMs` open the circuit. Open: requests get 503 at once for `openMs`. Half-open:
 * one probe request goes through; success closes the circuit, failure opens it again.
 * State is per route and per worker process.
 */
export const circuitBreaker = defineStep({
  code: 'circuit-breaker',
  summary: 'Open after N upstream failures in a window: 503 while open, then half-open probes',
  statuses: [{ status: 503, when: 'the circuit is open (Retry-After: seconds until a probe is allowed)' }],
  example: { failures: 5, windowMs: 10000, openMs: 30000 },
  schema: v.strictObject({
    failures: v.pipe(v.number(), v.integer(), v.minValue(1)),
    windowMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), 10_000),
    openMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), 30_000),
  }),
  create(s) {
    let state: 'closed' | 'open' | 'half-open' = 'closed';
    let failures: number[] = [];
    let openedAt = 0;
    let probing = false;
    const onDone = (status: number) => {
      const failed = status >= 500;
      const now = Date.now();
      if (state === 'half-open') {
        probing = false;
        if (failed) {
          state = 'open';
          openedAt = now;
        } else {
          state = 'closed';
          failures = [];
        }
        return;
      }
      if (!failed || state !== 'closed') return;
      failures = failures.filter((t) => now - t < s.windowMs);
      failures.push(now);
      if (failures.length >= s.failures) {
        state = 'open';
        openedAt = now;
        failures = [];
      }
    };
    return (flow) => {
      if (state === 'open') {
        const left = openedAt + s.openMs - Date.now();
        if (left > 0) return stepError(503, 'Svc.Data.CircuitOpen', 'The upstream is failing; the circuit is open', { 'retry-after': String(Math.ceil(left / 1000)) });
        state = 'half-open';
      }
      if (state === 'half-open') {
        if (probing) return stepError(503, 'Svc.Data.CircuitOpen', 'The circuit is half-open; a probe is in flight', { 'retry-after': '1' });
        probing = true;
      }
      flow.onDone(onDone);
      return undefined;
    };
  },
});
