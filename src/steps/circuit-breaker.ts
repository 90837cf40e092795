import * as v from 'valibot';
import { CLIENT_LEFT, defineStep } from './step.js';
import { stepError } from './reply.js';

/**
 * Stops sending traffic to a failing upstream. Closed: failures (status ≥ 500, including
 * the gateway's own 502/504) are counted in a sliding window; `failures` of them within
 * `windowMs` open the circuit. Open: requests get 503 at once for `openMs`. Half-open:
 * one probe request goes through; success closes the circuit, failure opens it again,
 * a probe whose client left before its answer completed (499, also after the head) decides nothing. State is per route and per worker
 * process, and survives publishes that leave the step unchanged.
 */
export const circuitBreaker = defineStep({
  code: 'circuit-breaker',
  summary: 'Open after N upstream failures in a window: 503 while open, then half-open probes',
  details: 'A failure is a 5xx from the proxy stage: the upstream\'s own, or the gateway\'s 502/504 for it (also for an answer the upstream broke off after its head: the request ends with that status). A 5xx a step answered (a later `concurrency-limit`, an auth service down) does not count, and a probe whose client left decides nothing.',
  statuses: [{ status: 503, when: 'the circuit is open (Retry-After: seconds until a probe is allowed)' }],
  example: { failures: 5, windowMs: 10000, openMs: 30000 },
  schema: v.strictObject({
    failures: v.pipe(v.number(), v.integer(), v.minValue(1)),
    windowMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), 10_000),
    openMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), 30_000),
  }),
  create(s, { state }) {
    // Kept across publishes: an unrelated publish must not close an open circuit.
    const b = state(() => ({ state: 'closed' as 'closed' | 'open' | 'half-open', failures: [] as number[], openedAt: 0, probe: 0, probes: 0 }));
    const open = (now: number) => {
      b.state = 'open';
      b.openedAt = now;
      b.failures = [];
    };
    // Requests admitted while closed: only they count towards opening.
    // A 5xx a step gave (a later concurrency-limit, an auth service down) says nothing of
    // the upstream: only the proxy stage's answers count (the upstream's, or 502/504 for it).
    const counted = (status: number, stepAnswered: boolean) => {
      if (status < 500 || stepAnswered || b.state !== 'closed') return;
      const now = Date.now();
      b.failures = b.failures.filter((t) => now - t < s.windowMs);
      b.failures.push(now);
      if (b.failures.length >= s.failures) open(now);
    };
    return (flow) => {
      if (b.state === 'open') {
        const left = b.openedAt + s.openMs - Date.now();
        if (left > 0) return stepError('Svc.Data.CircuitOpen', 'The upstream is failing; the circuit is open', { 'retry-after': String(Math.ceil(left / 1000)) });
        b.state = 'half-open';
      }
      if (b.state === 'half-open') {
        if (b.probe !== 0) return stepError('Svc.Data.CircuitOpen', 'The circuit is half-open; a probe is in flight', { 'retry-after': '1' });
        // Only this probe's outcome decides (not a request admitted earlier that ends now).
        const id = (b.probe = ++b.probes);
        flow.onDone((status, stepAnswered) => {
          if (b.probe !== id) return;
          b.probe = 0;
          // The client left, or a later step answered: no verdict on the upstream, the next request probes.
          if (status === CLIENT_LEFT || stepAnswered) return;
          if (status >= 500) open(Date.now());
          else {
            b.state = 'closed';
            b.failures = [];
          }
        });
        return undefined;
      }
      flow.onDone(counted);
      return undefined;
    };
  },
});
