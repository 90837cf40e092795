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
    'An answer is kept for `ttlSeconds`, or less when it says so itself (`s-maxage`, `max-age`, `Expires`, minus the `Age` it arrived with); an answer already stale (`max-age=0`, a past `Expires`) is not kept. Repeated `Cache-Control` and varied request headers count with every line. ' +
    'A request with `Cache-Control: no-cache` skips stored answers. Hits carry `X-Cache: HIT` and one `Age`; other GET and HEAD answers `X-Cache: MISS`; other methods pass untouched.',
  statuses: [{ status: 0, when: 'a stored answer (X-Cache: HIT)' }],
  example: { ttlSeconds: 30, maxEntries: 1000, maxEntryBytes: 262144 },
  schema: v.strictObject({
    ttlSeconds: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(86_400)),
    maxEntries: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1_000_000)), 1000),
    maxEntryBytes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(16 * 1024 * 1024)), 256 * 1024),
  }),
  touchesBody: 'stores and replays whole response bodies',
  create(s, { state }) {
    // Kept across publishes: another route's or tenant's publish must not empty this route's cache.
    const store = state(() => new ResponseStore(s.maxEntries));
    return (flow) => {
      const req = flow.req;
      if (req.method !== 'GET' && req.method !== 'HEAD') return undefined;
      // Every line of a repeated header counts (RFC 9110 §5.3), here and in the Vary key:
      // keyed by a first line only, a second line poisoned the entry for other clients.
      const cc = (req.headerList('cache-control') ?? '').toLowerCase();
      if (cc.includes('no-store')) return undefined;
      const consumer = flow.vars.consumer;
      // The query as the upstream receives it, byte for byte, not parsed: two spellings an
      // upstream may read differently (nginx's raw `$arg_`) never share an entry.
      const base = `${req.header('host') ?? ''}\u0000${flow.path}\u0000${flow.query ?? ''}\u0000${typeof consumer === 'string' ? consumer : ''}`;
      const header = (n: string) => req.headerList(n);
      const hit = store.get(base, header);
      const now = Date.now();
      if (hit && hit.expires > now && !cc.includes('no-cache')) {
        // As pairs: a stored answer's repeated headers (Link, Vary, …) all come back.
        const age = String(hit.ageAtStore + Math.floor((now - hit.storedAt) / 1000));
        const reply: StepReply = { status: hit.status, headers: [...hit.headers, ['x-cache', 'HIT'], ['age', age]], body: hit.body, served: true }; // a HEAD answer reports its length and drops it (Exchange)
        return reply;
      }
      flow.addResponseHeader('x-cache', 'MISS');
      if (req.method === 'HEAD') return undefined;
      const authorised = req.header('authorization') !== undefined;
      flow.collectResponse(s.maxEntryBytes, (a: CollectedAnswer) => {
        const rcc = headerListOf(a.headers, 'cache-control').toLowerCase();
        if (a.status !== 200 || a.headers.some(([k]) => k === 'set-cookie') || /\b(?:no-store|private|no-cache)\b/.test(rcc)) return a;
        if (authorised && !/\b(?:public|s-maxage|must-revalidate)\b/.test(rcc)) return a;
        const vary = headerListOf(a.headers, 'vary').split(',').map((x) => x.trim().toLowerCase()).filter(Boolean);
        if (vary.includes('*')) return a;
        const at = Date.now();
        const ageAtStore = upstreamAge(a.headers);
        // The upstream's freshness caps ttlSeconds (RFC 9111 §4.2): an answer stale already is not kept.
        const lifetime = Math.min(s.ttlSeconds, freshnessOf(rcc, a.headers, at) ?? s.ttlSeconds) - ageAtStore;
        if (lifetime <= 0) return a;
        const headers = a.headers.filter(([k]) => k !== 'x-cache' && k !== 'age');
        store.set(base, vary, header, { status: a.status, headers, body: a.body, expires: at + lifetime * 1000, storedAt: at, ageAtStore });
        return a;
      });
      return undefined;
    };
  },
});

/** Seconds of freshness the answer gives itself: s-maxage, else max-age, else Expires (RFC 9111 §4.2.1); null: none said. */
function freshnessOf(cc: string, headers: readonly (readonly [string, string])[], now: number): number | null {
  const m = /\bs-maxage\s*=\s*"?(\d+)/.exec(cc) ?? /\bmax-age\s*=\s*"?(\d+)/.exec(cc);
  if (m) return Number(m[1]);
  const expires = headers.find(([k]) => k === 'expires')?.[1];
  if (expires === undefined) return null;
  const t = Date.parse(expires);
  return Number.isNaN(t) ? 0 : Math.floor((t - now) / 1000); // an invalid date means already expired
}

/** The Age the upstream's answer already had (RFC 9111 §5.1), 0 when none or unreadable. */
function upstreamAge(headers: readonly (readonly [string, string])[]): number {
  const v = headers.find(([k]) => k === 'age')?.[1];
  return v !== undefined && /^\d+$/.test(v.trim()) ? Number(v.trim()) : 0;
}
