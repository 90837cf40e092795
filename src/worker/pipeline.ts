import type { CompiledStep } from '../contracts/generation.js';
import { MemberFlow } from './member-flow.js';
import type { Flow, StepCounters, StepEnv, StepOutcome, StepRun } from '../steps/step.js';
import type { StepLookup } from '../steps/step-registry.js';
import { withBudget } from './step-budget.js';
import type { StepStates } from './step-states.js';
import { LAST, RUNNING, type RouteSites } from './step-sites.js';

/** What a route's steps are built with, once per generation: the worker's services, steps, kept state and stall sites. */
export interface PipelineParts {
  env: StepEnv;
  registry: StepLookup;
  states: StepStates;
  /** Where the route's steps record that they run, for the stall watchdog; absent: not recorded. */
  sites?: RouteSites;
  /** The route's name and the counters its steps move (absent: not counted). */
  route?: string;
  counters?: StepCounters;
}

/**
 * A route's steps as one function (see buildPipeline), and the headers its steps own
 * (StepDefinition.ownedHeaders): the route's RequestFlow drops the client's values of
 * those before anything goes upstream, whatever each step's outcome; null: none.
 */
export function buildRoutePipeline(steps: readonly CompiledStep[], parts: PipelineParts): { run: StepRun; owned: readonly string[] | null } | null {
  const run = buildPipeline(steps, parts);
  if (run === null) return null;
  const owned = [...new Set(ownedBy(steps, parts.registry))];
  return { run, owned: owned.length === 0 ? null : owned };
}

function ownedBy(steps: readonly CompiledStep[], registry: StepLookup): string[] {
  const out: string[] = [];
  for (const s of steps) {
    if (s.kind === 'group') for (const m of s.members) out.push(...ownedBy(m, registry));
    else for (const h of registry.get(s.code)?.ownedHeaders?.(s.settings) ?? []) out.push(h.toLowerCase());
  }
  return out;
}

/**
 * Turns a route's compiled steps into one function, once per generation. Steps run in
 * order; the first that answers ends the chain (FailFast). A chain of sync steps stays
 * sync: a promise is only made when a step returns one. A route without steps gets
 * null and pays nothing.
 */
export function buildPipeline(steps: readonly CompiledStep[], parts: PipelineParts): StepRun | null {
  if (steps.length === 0) return null;
  const { env, sites } = parts;
  const runs = steps.map((s) => {
    if (s.kind === 'group') return groupRun(s.merge, s.members, parts);
    // A step with a budget: its promise is raced against it (step-budget.ts); none, no wrapper.
    const run = withBudget(stepRun(parts, s.code, s.settings, s.tenant, s.bucket), s.code, s.timeoutMs);
    const once = s.continue ? continuing(s.code, run, env) : run;
    return sites === undefined ? once : recorded(once, sites.cell, sites.id(s.code));
  });
  // Each step's code is put on the flow before it runs (a field write, no wrapper per request): steps
  // run one after another, so an answer is the last started step's. A group is `group` until it
  // decides (its deciding member's code then): a member's failure is never the step's before it.
  const codes = steps.map((s) => (s.kind === 'group' ? 'group' : s.code));
  if (runs.length === 1) {
    const only = runs[0]!;
    const code = codes[0]!;
    return (flow) => ((flow.answeredBy = code), only(flow));
  }
  const runFrom = (flow: Flow, from: number): StepOutcome | Promise<StepOutcome> => {
    for (let i = from; i < runs.length; i++) {
      flow.answeredBy = codes[i]!;
      const r = runs[i]!(flow);
      if (r === undefined) continue;
      if (r instanceof Promise) return r.then((x) => (x === undefined ? runFrom(flow, i + 1) : x));
      return r;
    }
    return undefined;
  };
  return (flow) => runFrom(flow, 0);
}

function stepRun(parts: PipelineParts, code: string, settings: unknown, tenant: string, bucket: string): StepRun {
  const def = parts.registry.get(code);
  if (!def?.create) throw new Error(`step ${code} has no runtime`); // the compiler never emits such a step
  return def.create(settings, { bucket, tenant, env: parts.env, state: parts.states.of(bucket), route: parts.route, counters: parts.counters });
}

const PASS: StepRun = () => undefined;

/**
 * The step's site is in the shared cell while its synchronous part runs, and stays the
 * last started after (stall-watchdog.ts): a loop blocked there names the step; one blocked
 * after the step's first await, or outside every step, names none (with the last started as a hint).
 */
function recorded(run: StepRun, cell: Int32Array, site: number): StepRun {
  return (flow) => {
    const outer = cell[RUNNING]!; // a group member's step runs inside the group's call
    cell[RUNNING] = cell[LAST] = site;
    try {
      return run(flow);
    } finally {
      cell[RUNNING] = outer;
    }
  };
}

/**
 * A step's answer that refuses the request. Steps also answer as their service (cors's
 * granted preflight, a cache hit, echo: `served`): that answer ends the chain whatever
 * the failure strategy, or a preflight would reach the upstream and a cache never serve.
 * Status alone cannot tell: forward-auth's 302 to a login page is a refusal.
 */
const failed = (o: StepOutcome): boolean => o !== undefined && o.served !== true;

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
 * A parallel group: every member chain runs concurrently on its own MemberFlow, and the
 * group settles as soon as its outcome is known; members still running are left to
 * finish unheard, and what they write to `vars` is dropped.
 *  - `all`: the first refusal decides at once. Otherwise it waits for every member: all
 *    passed, their changes apply in node order; a member answered as its service (a cache
 *    hit), the first such answer in node order is the answer (never before an auth
 *    member could still refuse).
 *  - `any`: the first member in node order that passes (or answers as its service)
 *    decides, as soon as every member before it has refused; only its changes apply.
 *    When all refuse, the first member's refusal is the answer.
 *  - `first`: whichever member settles first decides.
 * Settling early keeps a slow member (a forward-auth) from holding requests another
 * member already decided.
 */
function groupRun(merge: string, members: readonly CompiledStep[][], parts: PipelineParts): StepRun {
  const chains = members.map((m) => buildPipeline(m, parts) ?? PASS);
  return (flow) => {
    const before = { ...flow.vars };
    const flows = chains.map(() => new MemberFlow(flow));
    const pending = chains.map((c, i) => Promise.resolve(c(flows[i]!)));
    // Settled: apply the members that count (in node order), take back the others' vars.
    const settle = (counting: readonly number[]) => {
      flows.forEach((f, i) => {
        if (counting.includes(i)) f.applyTo(flow);
        else f.discard(before);
      });
    };
    // The group's answer is member i's: so is its label.
    const decidedBy = (i: number) => void (flow.answeredBy = flows[i]!.answeredBy);
    if (merge === 'first') {
      return Promise.race(pending.map((p, i) => p.then((r) => ({ i, r })))).then(({ i, r }) => {
        settle(r === undefined ? [i] : []);
        if (r !== undefined) decidedBy(i);
        return r;
      });
    }
    return merge === 'any' ? settleAny(pending, settle, decidedBy) : settleAll(pending, settle, decidedBy);
  };
}

type Settle = (counting: readonly number[]) => void;

function settleAll(pending: Promise<StepOutcome>[], settle: Settle, decidedBy: (i: number) => void): Promise<StepOutcome> {
  return new Promise((resolve, reject) => {
    const out: StepOutcome[] = [];
    let left = pending.length;
    let done = false;
    pending.forEach((p, i) =>
      p.then(
        (r) => {
          if (done) return;
          if (failed(r)) {
            done = true;
            settle([]);
            decidedBy(i);
            return resolve(r);
          }
          out[i] = r;
          if (--left > 0) return;
          done = true;
          const served = out.findIndex((x) => x !== undefined);
          settle(served === -1 ? out.map((_x, j) => j) : []);
          if (served !== -1) decidedBy(served);
          resolve(served === -1 ? undefined : out[served]);
        },
        (err) => {
          if (done) return;
          done = true;
          settle([]);
          decidedBy(i); // the failure is this member's: its step's code names it
          reject(err);
        },
      ),
    );
  });
}

const UNSETTLED = Symbol('unsettled');

function settleAny(pending: Promise<StepOutcome>[], settle: Settle, decidedBy: (i: number) => void): Promise<StepOutcome> {
  return new Promise((resolve, reject) => {
    const out: (StepOutcome | typeof UNSETTLED)[] = pending.map(() => UNSETTLED);
    let next = 0; // members before it have refused
    let done = false;
    const advance = () => {
      for (; next < out.length && out[next] !== UNSETTLED; next++) {
        const r = out[next] as StepOutcome;
        if (failed(r)) continue;
        done = true;
        settle([next]); // a served answer's member too: its response hooks apply to its answer
        if (r !== undefined) decidedBy(next);
        return resolve(r);
      }
      if (next === out.length) {
        done = true;
        settle([]);
        decidedBy(0);
        resolve(out[0] as StepOutcome); // every member refused
      }
    };
    pending.forEach((p, i) =>
      p.then(
        (r) => {
          if (done) return;
          out[i] = r;
          advance();
        },
        (err) => {
          if (done) return;
          done = true;
          settle([]);
          decidedBy(i); // the failure is this member's: its step's code names it
          reject(err);
        },
      ),
    );
  });
}
