import * as v from 'valibot';
import { defineStep } from './step.js';
import { stepError } from './reply.js';
import { repeatsARepetition } from './safe-regex.js';

const Pattern = v.pipe(
  v.string(),
  v.check((p) => {
    try {
      new RegExp(p, 'i');
      return true;
    } catch {
      return false;
    }
  }, 'must be a valid regular expression'),
  v.check((p) => !repeatsARepetition(p), 'must not repeat a group that itself repeats, like (a+)+ (it backtracks exponentially)'),
);

/** Refuses user agents matching a deny pattern (unless an allow pattern matches); optionally a missing User-Agent too. */
export const botDetection = defineStep({
  code: 'bot-detection',
  summary: 'Refuse requests whose User-Agent matches deny patterns (403)',
  statuses: [{ status: 403, when: 'the User-Agent matches a deny pattern (or is missing, with denyMissing)' }],
  example: { deny: ['bot', 'crawler'], allow: ['goodbot'] },
  schema: v.strictObject({
    deny: v.optional(v.array(Pattern), ['bot', 'crawl', 'spider', 'scrape']),
    allow: v.optional(v.array(Pattern), []),
    denyMissing: v.optional(v.boolean(), false),
  }),
  create(s) {
    // One RegExp per pattern: joined into one, patterns valid alone can clash (two groups of one name).
    const deny = s.deny.length ? s.deny.map((p) => new RegExp(p, 'i')) : null;
    const allow = s.allow.length ? s.allow.map((p) => new RegExp(p, 'i')) : null;
    const forbidden = stepError(403, 'Svc.Data.BotDenied', 'This client is not allowed');
    return (flow) => {
      const ua = flow.req.header('user-agent');
      if (ua === undefined || ua === '') return s.denyMissing ? forbidden : undefined;
      if (allow && allow.some((re) => re.test(ua))) return undefined;
      return deny && deny.some((re) => re.test(ua)) ? forbidden : undefined;
    };
  },
});
