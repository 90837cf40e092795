// The five-step route of issue 4's ratio, shared by run.mjs (on a real gateway) and
// hot-path.mjs (on the worker's runtime with fakes), so both time the same steps.
import { createHash } from 'node:crypto';

/** The API key the route's key-auth accepts (the gateway only holds its SHA-256). */
export const BENCH_API_KEY = 'bench-key-0123456789';
/** The headers every request to the route carries: the key and an allowed Origin. */
export const STEPS_REQUEST_HEADERS = { 'x-api-key': BENCH_API_KEY, origin: 'https://bench.example' };

export const FIVE_STEPS = [
  { code: 'request-id', settings: {} },
  { code: 'cors', settings: { origins: ['https://bench.example'] } },
  { code: 'key-auth', settings: { keys: [{ id: 'bench', sha256: createHash('sha256').update(BENCH_API_KEY).digest('hex') }] } },
  { code: 'rate-limit', settings: { requestsPerSecond: 1_000_000, burst: 1_000_000 } },
  { code: 'request-headers', settings: { set: { 'x-bench': '1' } } },
];
