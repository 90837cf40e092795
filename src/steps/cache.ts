import * as v from 'valibot';
import { defineStep, type CollectedAnswer, type StepReply } from './step.js';

interface Entry {
  status: number;
  headers: [string, string][];
  body: Buffer;
  expires: number;
}

/**
 * An in-memory response cache (per worker) for GET and HEAD: 200 answers with a
 * Content-Length up to maxEntryBytes are kept for ttlSeconds, keyed by host, path, query
 * and the headers the answer's Vary names; `Cache-Control: no-store` or `private` (either
 * side) and Set-Cookie answers are never stored. X-Cache says HIT or MISS. The oldest
 * entries go first when maxEntries is reached.
 */
export const cache = defineStep({
  code: 'cache',
  summary: 'In-memory response cache for GET/HEAD with TTL, size bound and Vary (X-Cache: HIT|MISS)',
  statuses: [{ status: 0, when: 'a stored answer (X-Cache: HIT)' }],
  example: { ttlSeconds: 30, maxEntries: 1000, maxEntryBytes: 262144 },
  schema: v.strictObject({
    ttlSeconds: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(86_400)),
    maxEntries: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1_000_000)), 1000),
    maxEntryBytes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(16 * 1024 * 1024)), 256 * 1024),
  }),
  create(s) {
    const store = new Map<string, Entry>(); // insertion order = age
    const varyByBase = new Map<string, string[]>();
    const keyOf = (base: string, names: string[], header: (n: string) => string | undefined) =>
      names.length ? `${base}\u0000${names.map((n) => `${n}=${header(n) ?? ''}`).join('\u0000')}` : base;
    return (flow) => {
      const req = flow.req;
      if (req.method !== 'GET' && req.method !== 'HEAD') return undefined;
      const cc = (req.header('cache-control') ?? '').toLowerCase();
      if (cc.includes('no-store')) return undefined;
      const base = `${req.header('host') ?? ''}\u0000${flow.path}\u0000${flow.query ?? ''}`;
      const header = (n: string) => req.header(n);
      const names = varyByBase.get(base) ?? [];
      const hit = store.get(keyOf(base, names, header));
      const now = Date.now();
      if (hit && hit.expires > now && !cc.includes('no-cache')) {
        const reply: StepReply = { status: hit.status, headers: Object.fromEntries([...hit.headers, ['x-cache', 'HIT'], ['age', String(Math.floor((now - (hit.expires - s.ttlSeconds * 1000)) / 1000))]]), body: hit.body }; // a HEAD answer reports its length and drops it (Exchange)
        return reply;
      }
      flow.addResponseHeader('x-cache', 'MISS');
      if (req.method === 'HEAD') return undefined;
      flow.collectResponse(s.maxEntryBytes, (a: CollectedAnswer) => {
        const get = (n: string) => a.headers.find(([k]) => k === n)?.[1];
        const rcc = (get('cache-control') ?? '').toLowerCase();
        if (a.status !== 200 || rcc.includes('no-store') || rcc.includes('private') || get('set-cookie') !== undefined) return a;
        const vary = (get('vary') ?? '').split(',').map((x) => x.trim().toLowerCase()).filter(Boolean);
        if (vary.includes('*')) return a;
        varyByBase.set(base, vary);
        const key = keyOf(base, vary, header);
        store.delete(key);
        if (store.size >= s.maxEntries) store.delete(store.keys().next().value!);
        store.set(key, { status: a.status, headers: a.headers.filter(([k]) => k !== 'x-cache'), body: a.body, expires: Date.now() + s.ttlSeconds * 1000 });
        return a;
      });
      return undefined;
    };
  },
});
