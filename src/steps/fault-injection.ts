import * as v from 'valibot';
import { defineStep, type StepOutcome } from './step.js';

const Percent = v.pipe(v.number(), v.minValue(0), v.maxValue(100));

/** Delays or aborts a share of requests, for testing how clients cope. */
export const faultInjection = defineStep({
  code: 'fault-injection',
  summary: 'Delay or abort a percentage of requests',
  details:
    'Needs `abort`, `delay`, or both (a delayed request may then be aborted). With `abort.percent` 100 every request is refused: unless its chain node has ' +
    '`failureStrategy: "Continue"`, what comes after it never runs, and a dry-run warns about each (`Compile.Orch.NodeNeverRuns`).',
  statuses: [{ status: 0, when: 'the abort status, for the configured share of requests' }],
  example: { abort: { percent: 5, status: 503 }, delay: { percent: 10, ms: 200 } },
  schema: v.pipe(
    v.strictObject({
      abort: v.optional(v.strictObject({ percent: Percent, status: v.pipe(v.number(), v.integer(), v.minValue(200), v.maxValue(599)), body: v.optional(v.string(), 'fault injected') })),
      delay: v.optional(v.strictObject({ percent: Percent, ms: v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(600_000)) })),
    }),
    v.check((s) => s.abort !== undefined || s.delay !== undefined, 'needs abort or delay'),
  ),
  // random() * 100 < 100 holds for every draw: a 100 % abort refuses every request.
  alwaysAnswers: (s) => (s.abort?.percent === 100 ? 'refusal' : null),
  create(s, { env }) {
    const random = env.random ?? Math.random;
    const abort = s.abort ? { status: s.abort.status, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: s.abort.body } : undefined;
    const hit = (percent: number) => percent > 0 && random() * 100 < percent;
    return (): StepOutcome | Promise<StepOutcome> => {
      const aborted = abort && hit(s.abort!.percent) ? abort : undefined;
      if (s.delay && hit(s.delay.percent)) return new Promise((r) => setTimeout(() => r(aborted), s.delay!.ms));
      return aborted;
    };
  },
});
