import * as v from 'valibot';
import { defineStep } from './step.js';
import { stepError } from './reply.js';
import { compileAnyOf, patternIssue } from './linear-regex.js';

const CASE = { ignoreCase: true };

const Pattern = v.pipe(
  v.string(),
  v.check(
    (p) => patternIssue(p, CASE) === undefined,
    (issue) => `pattern ${patternIssue(issue.input as string, CASE)}`,
  ),
);

/** Refuses user agents matching a deny pattern (unless an allow pattern matches); optionally a missing User-Agent too. */
export const botDetection = defineStep({
  code: 'bot-detection',
  summary: 'Refuse requests whose User-Agent matches deny patterns (403)',
  details: 'Patterns are JavaScript regular expressions, matched case-insensitively anywhere in the User-Agent, and run on a linear-time engine (RE2): matching takes time in proportion to the User-Agent whatever the pattern. Backreferences (`\\1`, `\\k<name>`), lookahead and lookbehind (`(?=`, `(?!`, `(?<=`, `(?<!`), atomic groups and possessive quantifiers are compile issues, and so are patterns over 1,000 characters, a list whose patterns together compile to over 2,000 RE2 instructions, and letter escapes RE2 reads differently (`\\A`, `\\a`, `\\Q`, `\\pN`…: write the letter alone). An astral character (an emoji) counts as one character, as with JavaScript\'s `u` flag.',
  statuses: [{ status: 403, when: 'the User-Agent matches a deny pattern (or is missing, with denyMissing)' }],
  example: { deny: ['bot', 'crawler'], allow: ['goodbot'] },
  schema: v.strictObject({
    deny: v.optional(v.array(Pattern), ['bot', 'crawl', 'spider', 'scrape']),
    allow: v.optional(v.array(Pattern), []),
    denyMissing: v.optional(v.boolean(), false),
  }),
  create(s) {
    // Each list is one program, tested in one pass over the User-Agent.
    const deny = compileAnyOf(s.deny, CASE);
    const allow = compileAnyOf(s.allow, CASE);
    const forbidden = stepError('Svc.Data.BotDenied');
    return (flow) => {
      const ua = flow.req.header('user-agent');
      if (ua === undefined || ua === '') return s.denyMissing ? forbidden : undefined;
      if (allow && allow.test(ua)) return undefined;
      return deny && deny.test(ua) ? forbidden : undefined;
    };
  },
});
