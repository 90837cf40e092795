import * as v from 'valibot';
import { defineStep } from './step.js';
import { formatQuery, pairOf, pairsOf, semicolonPairs, type QueryPair } from '../shared/url-query.js';
import { credentialNames } from '../shared/query-credential.js';

/** Sets or removes query parameters of the upstream request; untouched parameters keep their bytes. */
export const queryParams = defineStep({
  code: 'query-params',
  summary: 'Set or remove query parameters sent to the upstream',
  details: 'A name matches every pair an upstream could read as it, as key-auth reads its key (decoded, `+` as a space, any case, PHP\'s `.`, space and `[` forms, `%uXXXX`, inside a `;`-joined segment): `remove: ["debug"]` also removes `%64ebug=1` and `DEBUG=1`, and `set` leaves no other pair an upstream would read as its name (nginx reads the first `API_KEY=` for `$arg_api_key`). `set` replaces every such pair and appends one, encoded. The other pairs keep their bytes.',
  statuses: [],
  example: { set: { version: '2' }, remove: ['debug'] },
  schema: v.strictObject({
    set: v.optional(v.record(v.pipe(v.string(), v.minLength(1)), v.string()), {}),
    remove: v.optional(v.array(v.pipe(v.string(), v.minLength(1))), []),
  }),
  create(s) {
    // One name rule with key-auth and the logs' redaction, `;`-joined segments included.
    const isNamed = credentialNames([...s.remove, ...Object.keys(s.set)]);
    const named = (p: QueryPair) => semicolonPairs(p).some(isNamed);
    const append = Object.entries(s.set).map(([k, val]) => pairOf(`${encodeURIComponent(k)}=${encodeURIComponent(val)}`));
    return (flow) => {
      const q = flow.query;
      // The client's query is parsed once per request (the request's own); a query an earlier step changed, here.
      const pairs = pairsOf(q, flow.req);
      // Only the named pairs go; the rest keep their bytes, empty pairs (`a=1&&b=2`) included.
      const kept = pairs.filter((p) => p.raw === '' || !named(p));
      if (kept.length === pairs.length && append.length === 0) return undefined; // nothing to change: not even a bare '?'
      const all = [...kept, ...append];
      flow.query = formatQuery(all);
      return undefined;
    };
  },
});
