import * as v from 'valibot';
import { defineStep, headerListOf, type CollectedAnswer, type StepReply } from './step.js';
import { ResponseStore } from './response-store.js';

/**
 * An in-memory response cache (per worker) for GET and HEAD: 200 answers with a
 * Content-Length up to maxEntryBytes are kept for ttlSeconds, keyed by host, path, query,
 * the consumer an auth step before it named, and the headers the answer's Vary names.
 * Never stored: `Cache-Control: no-store` (either side), `private` or `no-cache` answers,
 * Set-Cookie answers, and answers to requests carrying Authorization unless the answer says
 * `public`, `s-maxage` or `must-revalidate` (RFC 9111 §3.5: a shared cache must not hand
 * one client's authorised answer to another). X-Cache says HIT or MISS. The oldest
 * entries go first when maxEntries is reached.
 */
export const cache = defineStep({
  code: 'cache',
  summary: 'In-memory response cache for GET/HEAD with TTL, size bound and Vary (X-Cache: HIT|MISS)',
  details:
    'Kept: 200 answers with a Content-Length up to `maxEntryBytes`, per worker, keyed by host, path, query, the consumer an auth step before it named, and the request headers the answer\'s `Vary` names (`Vary: *` is never stored). ' +
    'Never stored: `Cache-Control: no-store` on either side, `private` or `no-cache` answers, answers with `Set-Cookie`, and answers to requests carrying `Authorization` unless the answer says `public`, `s-maxage` or `must-revalidate` (RFC 9111 §3.5). ' +
    'A request with `Cache-Control: no-cache` skips stored answers. Hits carry `X-Cache: HIT` and `Age`; other GET and HEAD answers `X-Cache: MISS`; other methods pass untouched.',
  statuses: [{ status: 0, when: 'a stored answer (X-Cache: HIT)' }],
  example: { ttlSeconds: 30, maxEntries: 1000, maxEntryBytes: 262144 },
  schema: v.strictObject({
    ttlSeconds: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(86_400)),
    maxEntries: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1_000_000)), 1000),
    maxEntryBytes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(16 * 1024 * 1024)), 256 * 1024),
  }),
  create(s) {
    const store = new ResponseStore(s.maxEntries);
    return (flow) => {
      const req = flow.req;
      if (req.method !== 'GET' && req.method !== 'HEAD') return undefined;
      const cc = (req.header('cache-control') ?? '').toLowerCase();
      if (cc.includes('no-store')) return undefined;
      const consumer = flow.vars.consumer;
      const base = `${req.header('host') ?? ''}\u0000${flow.path}\u0000${flow.query ?? ''}\u0000${typeof consumer === 'string' ? consumer : ''}`;
      const header = (n: string) => req.header(n);
      const hit = store.get(base, header);
      const now = Date.now();
      if (hit && hit.expires > now && !cc.includes('no-cache')) {
        // As pairs: a stored answer's repeated headers (Link, Vary, …) all come back.
        const age = String(Math.floor((now - (hit.expires - s.ttlSeconds * 1000)) / 1000));
        const reply: StepReply = { status: hit.status, headers: [...hit.headers, ['x-cache', 'HIT'], ['age', age]], body: hit.body }; // a HEAD answer reports its length and drops it (Exchange)
        return reply;
      }
      flow.addResponseHeader('x-cache', 'MISS');
      if (req.method === 'HEAD') return undefined;
      const authorised = req.header('authorization') !== undefined;
      flow.collectResponse(s.maxEntryBytes, (a: CollectedAnswer) => {
        const get = (n: string) => a.headers.find(([k]) => k === n)?.[1];
        const rcc = (get('cache-control') ?? '').toLowerCase();
        if (a.status !== 200 || get('set-cookie') !== undefined || /\b(?:no-store|private|no-cache)\b/.test(rcc)) return a;
        if (authorised && !/\b(?:public|s-maxage|must-revalidate)\b/.test(rcc)) return a;
        const vary = headerListOf(a.headers, 'vary').split(',').map((x) => x.trim().toLowerCase()).filter(Boolean);
        if (vary.includes('*')) return a;
        store.set(base, vary, header, { status: a.status, headers: a.headers.filter(([k]) => k !== 'x-cache'), body: a.body, expires: Date.now() + s.ttlSeconds * 1000 });
        return a;
      });
      return undefined;
    };
  },
});
