import type { CompiledStep } from '../compiler/generation.js';
import { STEPS } from '../steps/registry.js';
import { MemberFlow } from './member-flow.js';
import type { Flow, StepEnv, StepOutcome, StepRun } from '../steps/step.js';

/**
 * A route's steps as one function (see buildPipeline), and the headers its steps own
 * (StepDefinition.ownedHeaders): the route's RequestFlow drops the client's values of
 * those before anything goes upstream, whatever each step's outcome; null: none.
 */
export function buildRoutePipeline(steps: readonly CompiledStep[], env: StepEnv): { run: StepRun; owned: readonly string[] | null } | null {
  const run = buildPipeline(steps, env);
  if (run === null) return null;
  const owned = [...new Set(ownedBy(steps))];
  return { run, owned: owned.length === 0 ? null : owned };
}

function ownedBy(steps: readonly CompiledStep[]): string[] {
  const out: string[] = [];
  for (const s of steps) {
    if (s.kind === 'group') for (const m of s.members) out.push(...ownedBy(m));
    else for (const h of STEPS.get(s.code)?.ownedHeaders?.(s.settings) ?? []) out.push(h.toLowerCase());
  }
  return out;
}

/**
 * Turns a route's compiled steps into one function, once per generation. Steps run in
 * order; the first that answers ends the chain (FailFast). A chain of sync steps stays
 * sync: a promise is only made when a step returns one. A route without steps gets
 * null and pays nothing.
 */
export function buildPipeline(steps: readonly CompiledStep[], env: StepEnv): StepRun | null {
  if (steps.length === 0) return null;
  const runs = steps.map((s) => {
    if (s.kind === 'group') return groupRun(s.merge, s.members, env);
    const run = stepRun(s.code, s.settings, s.tenant, s.bucket, env);
    return s.continue ? continuing(s.code, run, env) : run;
  });
  if (runs.length === 1) return runs[0]!;
  const runFrom = (flow: Flow, from: number): StepOutcome | Promise<StepOutcome> => {
    for (let i = from; i < runs.length; i++) {
      const r = runs[i]!(flow);
      if (r === undefined) continue;
      if (r instanceof Promise) return r.then((x) => (x === undefined ? runFrom(flow, i + 1) : x));
      return r;
    }
    return undefined;
  };
  return (flow) => runFrom(flow, 0);
}

function stepRun(code: string, settings: unknown, tenant: string, bucket: string, env: StepEnv): StepRun {
  const def = STEPS.get(code);
  if (!def?.create) throw new Error(`step ${code} has no runtime`); // the compiler never emits such a step
  return def.create(settings, { bucket, tenant, env });
}

const PASS: StepRun = () => undefined;

/**
 * A step's answer that is a failure (a refusal, an error). Steps also answer with success
 * (cors's granted preflight, a cache hit, echo): that answer ends the chain whatever the
 * failure strategy, or a preflight would reach the upstream and a cache never serve.
 */
const failed = (o: StepOutcome): boolean => o !== undefined && o.status >= 400;

/** failureStrategy Continue: a failure is logged and the chain goes on; a success answer still ends it. */
function continuing(code: string, run: StepRun, env: StepEnv): StepRun {
  const swallow = (o: StepOutcome): StepOutcome => {
    if (!failed(o)) return o;
    env.log.warn({ step: code, status: o!.status }, 'step failed; chain continues (failureStrategy Continue)');
    return undefined;
  };
  return (flow) => {
    const r = run(flow);
    return r instanceof Promise ? r.then(swallow) : swallow(r);
  };
}

/**
 * A parallel group: every member chain runs concurrently on its own MemberFlow, then
 * `merge` decides: `all` passes when every member passed (else the first answer in
 * member order); `any` passes when one member passed, and a member's success answer (a
 * granted preflight, a cache hit) is the group's answer (else the first failure);
 * `first` takes whichever settles first. The changes of the members that count are
 * applied in node order, whatever order they finished in.
 */
function groupRun(merge: string, members: readonly CompiledStep[][], env: StepEnv): StepRun {
  const chains = members.map((m) => buildPipeline(m, env) ?? PASS);
  return async (flow) => {
    const flows = chains.map(() => new MemberFlow(flow));
    const pending = chains.map((c, i) => Promise.resolve(c(flows[i]!)).then((r) => ({ i, r })));
    if (merge === 'first') {
      const { i, r } = await Promise.race(pending);
      if (r === undefined) flows[i]!.applyTo(flow);
      return r;
    }
    const results = await Promise.all(pending);
    const passed = results.filter((x) => x.r === undefined);
    if (merge === 'any') {
      const answer = results.find((x) => x.r !== undefined && !failed(x.r));
      if (passed.length === 0 && answer === undefined) return results[0]!.r; // every member failed
      // The answering member counts too: its response hooks (a request-id before a cache hit) apply to its answer.
      for (const x of results) if (x.r === undefined || x === answer) flows[x.i]!.applyTo(flow);
      return answer?.r;
    }
    if (passed.length !== results.length) return results.find((x) => x.r !== undefined)!.r;
    for (const x of passed) flows[x.i]!.applyTo(flow);
    return undefined;
  };
}
