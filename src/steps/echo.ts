import * as v from 'valibot';
import { defineStep } from './step.js';

/** Answers with the request as the upstream would have seen it after the preceding steps: for debugging chains. */
export const echo = defineStep({
  code: 'echo',
  summary: 'Answer with the request as the upstream would see it (debugging)',
  details:
    'It shows the request after the preceding steps, before the proxy stage adds X-Forwarded-For/-Proto/-Host and drops hop-by-hop headers. ' +
    'It answers every request: a step or chain node placed after it never runs, and a dry-run warns about each (`Compile.Orch.NodeNeverRuns`).',
  statuses: [{ status: 200, when: 'always (or the configured status): the request as the upstream would see it' }],
  example: {},
  schema: v.strictObject({ status: v.optional(v.pipe(v.number(), v.integer(), v.minValue(200), v.maxValue(599)), 200) }),
  alwaysAnswers: () => 'served',
  create(s) {
    return (flow) => ({
      status: s.status,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...flow.preview(), vars: flow.vars }),
      served: true,
    });
  },
});
