import * as v from 'valibot';
import { defineStep } from './step.js';
import { stepError } from './reply.js';

/**
 * Caps the requests of this route in flight at once, per worker process (so the node
 * admits up to max × workers); over the cap: 503 with Retry-After. The count drops when
 * the exchange ends, however it ends; the count survives publishes that leave the step unchanged.
 */
export const concurrencyLimit = defineStep({
  code: 'concurrency-limit',
  summary: 'Cap in-flight requests of the route (per worker); 503 when full',
  statuses: [{ status: 503, when: 'max requests of the route are already in flight in this worker' }],
  example: { max: 100 },
  schema: v.strictObject({ max: v.pipe(v.number(), v.integer(), v.minValue(1)) }),
  create(s, { state }) {
    // Kept across publishes: an unrelated publish must not forget the requests in flight.
    const count = state(() => ({ inFlight: 0 }));
    const full = stepError('Svc.Data.ConcurrencyLimited', `More than ${s.max} requests in flight on this route`, { 'retry-after': '1' });
    const release = () => {
      count.inFlight--;
    };
    return (flow) => {
      if (count.inFlight >= s.max) return full;
      count.inFlight++;
      flow.onDone(release);
      return undefined;
    };
  },
});
