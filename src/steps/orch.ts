import * as v from 'valibot';
import { defineStep } from './step.js';

/**
 * Binds a route to a shared `orch` chain. The compiler inlines the chain's nodes in
 * place of this step, so a bound chain and the same steps written inline compile to
 * the same runtime.
 */
export const orch = defineStep({
  code: 'orch',
  summary: 'Run a shared orchestration chain (an orch entity of the tenant)',
  statuses: [],
  example: { ref: 'auth-chain' },
  schema: v.strictObject({ ref: v.pipe(v.string(), v.minLength(1)) }),
  compileTime: true,
});
