import type { CompiledStep, CompileIssue } from '../contracts/generation.js';
import { BUILTIN_STEPS } from '../steps/registry.js';
import type { OrchDoc } from './documents.js';

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
export function alwaysAnswers(steps: readonly CompiledStep[], continued = false): AlwaysAnswer | null {
  for (const s of steps) {
    const a = s.kind === 'step' ? stepAnswers(s, continued) : groupAnswers(s.merge, s.members.map((m) => alwaysAnswers(m, continued)));
    if (a) return a;
  }
  return null;
}

/** `continued`: the step runs under a Continue node (its chain is bound by one), as if marked Continue itself. */
function stepAnswers(s: Extract<CompiledStep, { kind: 'step' }>, continued: boolean): AlwaysAnswer | null {
  // Only built-ins declare alwaysAnswers (echo, fault-injection): a package step is never assumed to.
  const kind = BUILTIN_STEPS.get(s.code)?.alwaysAnswers?.(s.settings as never) ?? null;
  if (kind === null || ((s.continue || continued) && kind !== 'served')) return null;
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
 * that answers every request. `owner`: the route or orch chain the units belong to;
 * `continued`: the units run under a Continue node, whose refusals are passed over.
 */
export function neverRunsWarnings(owner: { kind: string; name: string }, units: readonly RunUnit[], continued = false): CompileIssue[] {
  let at = -1;
  let answer: AlwaysAnswer | null = null;
  for (let i = 0; i < units.length - 1 && answer === null; i++) {
    answer = alwaysAnswers(units[i]!.steps, continued);
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

/**
 * Per chain, its nodes that never run in every place a running route inlined it so far: under
 * a Continue node a refusal no longer ends it, so only the warnings all places agree on stay.
 * A route that answers by itself never runs its steps (Compile.Route.StepsIgnored says so), so
 * the chains it binds are not recorded for it.
 */
export class ChainNeverRuns {
  private readonly byChain = new Map<string, CompileIssue[]>();

  /** One place `chain` is inlined, its units in run order. */
  record(chain: string, units: readonly RunUnit[], continued: boolean): void {
    const here = neverRunsWarnings({ kind: 'orch', name: chain }, units, continued);
    const before = this.byChain.get(chain);
    this.byChain.set(chain, before ? before.filter((w) => here.some((h) => h.pointer === w.pointer && h.message === w.message)) : here);
  }

  warnings(): CompileIssue[] {
    return [...this.byChain.values()].flat();
  }
}

/** Step `i` of a route's `steps` (at `base`), compiled to `steps`. */
export function stepUnit(base: string, i: number, raw: { code: string; settings: unknown }, steps: readonly CompiledStep[]): RunUnit {
  const label = `step ${i} (${stepLabel(raw.code, raw.settings)})`;
  return { label, code: raw.code, parts: [{ pointer: `${base}/${i}`, label }], steps };
}

/** Node `i` of a chain, compiled to `steps`. */
export function nodeUnit(doc: OrchDoc, i: number, steps: readonly CompiledStep[]): RunUnit {
  const part = nodePart(doc, i);
  return { label: part.label, code: doc.nodes[i]!.step, parts: [part], steps };
}

/** A chain's group, its members the nodes at `indexes`, compiled to `group`. */
export function groupUnit(doc: OrchDoc, id: string, merge: string, indexes: readonly number[], group: CompiledStep): RunUnit {
  return { label: `group ${id} (${merge})`, code: '', parts: indexes.map((i) => nodePart(doc, i)), steps: [group] };
}

function nodePart(doc: OrchDoc, i: number): { pointer: string; label: string } {
  const n = doc.nodes[i]!;
  return { pointer: `/nodes/${i}`, label: `node ${n.id} (${stepLabel(n.step, n.settings)})` };
}

/** A step as a warning names it: its code, or `orch <ref>` for a chain binding. */
function stepLabel(code: string, settings: unknown): string {
  const ref = code === 'orch' ? (settings as { ref?: unknown } | undefined)?.ref : undefined;
  return typeof ref === 'string' ? `orch ${ref}` : code;
}
