import type { CompiledStep, CompileIssue } from '../contracts/generation.js';
import { STEPS } from '../steps/registry.js';

/** How a step, group or chain that answers every request answers: 'either' when it depends on the request. */
type AnswerKind = 'served' | 'refusal' | 'either';

/** What answers every request in a run of compiled steps: the deciding step's code and its kind of answer. */
export interface AlwaysAnswer {
  code: string;
  kind: AnswerKind;
}

/**
 * One unit of a route's `steps` or of a chain's run order, as compiled: a step, a node
 * (an `orch` node inlines its chain), or a group. `label` names it as the one that
 * answers; `parts` are its steps or nodes, each warned about when an earlier unit answers.
 */
export interface RunUnit {
  label: string;
  /** The step code the label names, when the unit is one step ('' for a group or a chain). */
  code: string;
  parts: { pointer: string; label: string }[];
  steps: readonly CompiledStep[];
}

/**
 * The first step of `steps` that answers every request (StepDefinition.alwaysAnswers),
 * after the pipeline's rules (src/worker/pipeline.ts): under failureStrategy Continue only
 * a served answer ends the chain; an `all` group answers when any member does; `any` and
 * `first` groups only when every member does. Null: some request gets past all of them.
 */
export function alwaysAnswers(steps: readonly CompiledStep[]): AlwaysAnswer | null {
  for (const s of steps) {
    const a = s.kind === 'step' ? stepAnswers(s) : groupAnswers(s.merge, s.members.map(alwaysAnswers));
    if (a) return a;
  }
  return null;
}

function stepAnswers(s: Extract<CompiledStep, { kind: 'step' }>): AlwaysAnswer | null {
  const kind = STEPS.get(s.code)?.alwaysAnswers?.(s.settings as never) ?? null;
  if (kind === null || (s.continue && kind !== 'served')) return null;
  return { code: s.code, kind };
}

function groupAnswers(merge: string, members: (AlwaysAnswer | null)[]): AlwaysAnswer | null {
  const answering = members.filter((m): m is AlwaysAnswer => m !== null);
  const first = answering[0];
  if (!first || (merge !== 'all' && answering.length < members.length)) return null;
  const kinds = new Set(members.map((m) => m?.kind ?? 'either'));
  // `any` takes the first member in node order that did not refuse: one served member is enough.
  const kind = kinds.size === 1 ? first.kind : merge === 'any' && kinds.has('served') ? 'served' : 'either';
  return { code: (answering.find((m) => m.kind === kind) ?? first).code, kind };
}

/**
 * Compile.Orch.NodeNeverRuns for every step or node of `units` placed after the first unit
 * that answers every request. `owner`: the route or orch chain the units belong to.
 */
export function neverRunsWarnings(owner: { kind: string; name: string }, units: readonly RunUnit[]): CompileIssue[] {
  let at = -1;
  let answer: AlwaysAnswer | null = null;
  for (let i = 0; i < units.length - 1 && answer === null; i++) {
    answer = alwaysAnswers(units[i]!.steps);
    at = i;
  }
  if (answer === null) return [];
  const by = units[at]!;
  const who = by.code === answer.code ? by.label : `${by.label}, whose ${answer.code} step`;
  return units.slice(at + 1).flatMap((u) =>
    u.parts.map((p) => ({
      kind: owner.kind,
      name: owner.name,
      pointer: p.pointer,
      code: 'Compile.Orch.NodeNeverRuns' as const,
      message: `${p.label} never runs: ${who} answers every request before it`,
    })),
  );
}
