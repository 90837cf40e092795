import * as v from 'valibot';
import { defineStep } from './step.js';
import { normalizePath } from '../shared/normalize-path.js';

/**
 * The one explicit way to change the upstream path: strip a prefix, replace a prefix,
 * or a regular-expression replacement, applied to the normalised path (dot segments
 * resolved, as routes match it); the result is normalised again. The query is kept.
 */
export const pathRewrite = defineStep({
  code: 'path-rewrite',
  summary: 'Strip or replace a path prefix, or rewrite the path with a regular expression',
  statuses: [],
  example: { stripPrefix: '/api' },
  schema: v.pipe(
    v.strictObject({
      stripPrefix: v.optional(v.pipe(v.string(), v.startsWith('/'))),
      replacePrefix: v.optional(v.strictObject({ from: v.pipe(v.string(), v.startsWith('/')), to: v.pipe(v.string(), v.startsWith('/')) })),
      regex: v.optional(
        v.strictObject({
          pattern: v.pipe(
            v.string(),
            v.check((p) => {
              try {
                new RegExp(p);
                return true;
              } catch {
                return false;
              }
            }, 'must be a valid regular expression'),
          ),
          replacement: v.string(),
        }),
      ),
    }),
    v.check((s) => [s.stripPrefix, s.replacePrefix, s.regex].filter((x) => x !== undefined).length === 1, 'exactly one of stripPrefix, replacePrefix, regex'),
  ),
  create(s) {
    let rewrite: (path: string) => string;
    if (s.stripPrefix !== undefined) {
      const p = s.stripPrefix;
      rewrite = (path) => (path.startsWith(p) ? path.slice(p.length) || '/' : path);
    } else if (s.replacePrefix) {
      const { from, to } = s.replacePrefix;
      rewrite = (path) => (path.startsWith(from) ? to + path.slice(from.length) : path);
    } else {
      const re = new RegExp(s.regex!.pattern);
      const rep = s.regex!.replacement;
      rewrite = (path) => path.replace(re, rep);
    }
    return (flow) => {
      // Rewrite the path the route matched on (dot segments resolved), never the raw one:
      // `/x/../pr/a` must lose the prefix `/pr` like `/pr/a`, and `/pr../a` must not turn
      // into `/../a`. The result is resolved again, so no rewrite can add a dot segment.
      const base = flow.path === flow.req.url ? flow.req.path : normalizePath(flow.path);
      const next = rewrite(base);
      flow.path = normalizePath(next.startsWith('/') ? next : '/' + next);
      return undefined;
    };
  },
});
