import * as v from 'valibot';
import { defineStep } from './step.js';
import { stepError } from './reply.js';
import { compileLinear, patternIssue } from './linear-regex.js';
import { normalizePath, type PathPolicy } from '../shared/normalize-path.js';

/** A rewrite's result: slashes merged, encoded slashes left encoded (the edge's policy already judged them). */
const REWRITE_POLICY: PathPolicy = { escapedSlashes: 'keep', mergeSlashes: true };

const DOT_SEGMENT = /(?:^|\/)(?:\.|%2e){1,2}(?:\/|$)/i;

/**
 * A replacement is path only: a literal `?` would start a second query after the path
 * (`/new?x=$1` with `$1` = `a&api_key=X` hands the upstream a key key-auth never read),
 * a `#` a fragment. Captures cannot bring either: the normalised path they come from has no
 * `?` (it starts the query) and no `#` (refused at the edge); `%3F`/`%23` stay encoded.
 */
const PathOnly = v.pipe(v.string(), v.regex(/^[^?#]*$/, 'must not contain `?` or `#`: a rewrite changes the path only (query-params changes the query)'));

/**
 * The one explicit way to change the upstream path: strip a prefix, replace a prefix,
 * or a regular-expression replacement, applied to the normalised path (as routes match
 * it). A result with a dot segment (made from a segment such
 * as `pr..`) is refused with 400, never sent. The query is kept, and a rewrite cannot add
 * one: `?` and `#` in `to` or `replacement` are compile issues.
 */
export const pathRewrite = defineStep({
  code: 'path-rewrite',
  summary: 'Strip or replace a path prefix, or rewrite the path with a regular expression',
  details: 'Exactly one of `stripPrefix`, `replacePrefix`, `regex`. The rewrite applies to the normalised path (dot segments resolved, as routes match it); a result with a dot segment is refused with 400; the result is put in normal form (slashes merged, a leading `//` included) before it goes upstream. `regex` replaces the first match of `pattern` (a JavaScript regular expression) with `replacement`, which takes `$1`, `$<name>`, `$&` and `$$` as `String.prototype.replace` does. A rewrite changes the path only: a `?` or `#` in `replacePrefix.to` or `replacement` is a compile issue (a `?` would start a query no step read; `query-params` changes the query), and a captured `%3F` or `%23` stays encoded. The pattern runs on a linear-time engine (RE2): matching takes time in proportion to the path whatever the pattern. Backreferences (`\\1`, `\\k<name>`), lookahead and lookbehind (`(?=`, `(?!`, `(?<=`, `(?<!`), atomic groups and possessive quantifiers are compile issues, and so are patterns over 1,000 characters or compiling to over 2,000 RE2 instructions, and letter escapes RE2 reads differently (`\\A`, `\\a`, `\\Q`, `\\pN`…: write the letter alone). An astral character (an emoji) counts as one character, as with JavaScript\'s `u` flag.',
  statuses: [{ status: 400, when: 'the rewritten path would contain a dot segment (`/pr../x` with stripPrefix `/pr`): Svc.Data.BadRequest' }],
  example: { stripPrefix: '/api' },
  schema: v.pipe(
    v.strictObject({
      stripPrefix: v.optional(v.pipe(v.string(), v.startsWith('/'))),
      replacePrefix: v.optional(v.strictObject({ from: v.pipe(v.string(), v.startsWith('/')), to: v.pipe(PathOnly, v.startsWith('/')) })),
      regex: v.optional(
        v.strictObject({
          pattern: v.pipe(
            v.string(),
            v.check(
              (p) => patternIssue(p) === undefined,
              (issue) => `pattern ${patternIssue(issue.input as string)}`,
            ),
          ),
          replacement: PathOnly,
        }),
      ),
    }),
    v.check((s) => [s.stripPrefix, s.replacePrefix, s.regex].filter((x) => x !== undefined).length === 1, 'exactly one of stripPrefix, replacePrefix, regex'),
  ),
  create(s) {
    const outside = stepError('Svc.Data.BadRequest', 'The rewritten path would contain a dot segment');
    const unusable = stepError('Svc.Data.BadRequest', 'The rewritten path is not a path the gateway forwards');
    let rewrite: (path: string) => string;
    if (s.stripPrefix !== undefined) {
      const p = s.stripPrefix;
      rewrite = (path) => (path.startsWith(p) ? path.slice(p.length) || '/' : path);
    } else if (s.replacePrefix) {
      const { from, to } = s.replacePrefix;
      rewrite = (path) => (path.startsWith(from) ? to + path.slice(from.length) : path);
    } else {
      const re = compileLinear(s.regex!.pattern);
      const rep = s.regex!.replacement;
      // The first match only, as String.prototype.replace without the g flag; the
      // capture-free test first keeps paths that do not match on the fastest matcher.
      rewrite = (path) => (re.test(path) ? re.matcher(path).replaceFirst(rep) : path);
    }
    return (flow) => {
      // flow.path starts as the normalised path the route matched (`/x/../pr/a` arrives as
      // `/pr/a` and loses the prefix `/pr` like it), or an earlier rewrite's checked result.
      let next = rewrite(flow.path);
      if (!next.startsWith('/')) next = '/' + next;
      // The base has no dot segment; one in the result was made by the rewrite from a
      // segment like `pr..`: a client reaching outside the mapping (`/public/../admin`).
      if (DOT_SEGMENT.test(next)) return outside;
      // The result goes upstream as the route's path did: in normal form (a `//x/admin`
      // made by `/api` -> `/` reads as host x to WHATWG parsers). Encoded slashes the
      // edge let in stay as they are.
      const normal = normalizePath(next, REWRITE_POLICY);
      if (normal === null) return unusable;
      flow.path = normal;
      return undefined;
    };
  },
});
