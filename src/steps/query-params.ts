import * as v from 'valibot';
import { defineStep } from './step.js';
import { formatQuery, pairOf, parseQuery } from '../shared/url-query.js';

/** Sets or removes query parameters of the upstream request; untouched parameters keep their bytes. */
export const queryParams = defineStep({
  code: 'query-params',
  summary: 'Set or remove query parameters sent to the upstream',
  details: 'Names are compared as upstreams read them (decoded, `+` as a space: `remove: ["debug"]` also removes `%64ebug=1`); `set` replaces every pair of its name and appends one, encoded. The other pairs keep their bytes.',
  statuses: [],
  example: { set: { version: '2' }, remove: ['debug'] },
  schema: v.strictObject({
    set: v.optional(v.record(v.pipe(v.string(), v.minLength(1)), v.string()), {}),
    remove: v.optional(v.array(v.pipe(v.string(), v.minLength(1))), []),
  }),
  create(s) {
    const drop = new Set([...s.remove, ...Object.keys(s.set)]);
    const append = Object.entries(s.set).map(([k, val]) => pairOf(`${encodeURIComponent(k)}=${encodeURIComponent(val)}`));
    return (flow) => {
      const q = flow.query;
      // The client's query is parsed once per request (the request's own); a query an earlier step changed, here.
      const pairs = q === flow.req.query ? flow.req.queryPairs : parseQuery(q);
      // Only the named pairs go (names decoded as upstreams decode them); the rest keep their bytes, empty pairs (`a=1&&b=2`) included.
      const kept = pairs.filter((p) => p.raw === '' || !drop.has(p.name));
      if (kept.length === pairs.length && append.length === 0) return undefined; // nothing to change: not even a bare '?'
      const all = [...kept, ...append];
      flow.query = formatQuery(all);
      return undefined;
    };
  },
});
