import * as v from 'valibot';
import { defineStep } from './step.js';

/** Sets or removes query parameters of the upstream request; untouched parameters keep their bytes. */
export const queryParams = defineStep({
  code: 'query-params',
  summary: 'Set or remove query parameters sent to the upstream',
  statuses: [],
  example: { set: { version: '2' }, remove: ['debug'] },
  schema: v.strictObject({
    set: v.optional(v.record(v.pipe(v.string(), v.minLength(1)), v.string()), {}),
    remove: v.optional(v.array(v.pipe(v.string(), v.minLength(1))), []),
  }),
  create(s) {
    const drop = new Set([...s.remove, ...Object.keys(s.set)]);
    const append = Object.entries(s.set).map(([k, val]) => `${encodeURIComponent(k)}=${encodeURIComponent(val)}`);
    const nameOf = (pair: string) => {
      const eq = pair.indexOf('=');
      const raw = eq === -1 ? pair : pair.slice(0, eq);
      try {
        return decodeURIComponent(raw.replace(/\+/g, ' '));
      } catch {
        return raw;
      }
    };
    return (flow) => {
      const q = flow.query;
      const pairs = q ? q.split('&') : [];
      // Only the named pairs go; the rest keep their bytes, empty pairs (`a=1&&b=2`) included.
      const kept = pairs.filter((p) => p === '' || !drop.has(nameOf(p)));
      if (kept.length === pairs.length && append.length === 0) return undefined; // nothing to change: not even a bare '?'
      const all = [...kept, ...append];
      flow.query = all.some((p) => p !== '') ? all.join('&') : null;
      return undefined;
    };
  },
});
