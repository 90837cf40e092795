import type { CollectedAnswer } from '../steps/step.js';
import type { RequestLife } from './request-life.js';

/** Phase 6 (phases.ts): the collectors, then the response hooks, over a whole answer; it goes out in one piece. */
export function responseSteps(life: RequestLife, answer: CollectedAnswer): void {
  const flow = life.flow!;
  const a = flow.collected(answer);
  const head = { status: a.status, headers: a.headers };
  flow.applyResponseHooks(head);
  life.reply(head.status, a.body, head.headers);
}
