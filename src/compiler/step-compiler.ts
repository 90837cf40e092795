import { BUILTINS } from '../steps/registry.js';
import type { StepRegistry } from '../steps/step-registry.js';
import type { StepEnv } from '../steps/step.js';
import { freshState, TRIAL_BUCKET } from '../steps/step-state.js';
import type { OrchDoc } from './documents.js';
import { checkStepSettings } from '../shared/settings-issues.js';
import type { CompiledStep, CompileIssue } from '../contracts/generation.js';
import { chainOrder, type ChainUnit } from './chain-order.js';
import { canonical } from './snapshot.js';
import { mayName } from './secret-policy.js';
import type { SecretPolicy } from '../contracts/secrets.js';
import type { CompileIssueCode } from '../shared/errors.js';
import { ChainNeverRuns, groupUnit, neverRunsWarnings, nodeUnit, stepUnit, type RunUnit } from './never-runs-warnings.js';

export const MAX_CHAIN_DEPTH = 4;

/** What a trial build gets: services that do nothing (factories must not call them while building). */
const TRIAL_ENV: StepEnv = {
  rateLimits: { acquire: () => true, remaining: () => 0 },
  traceId: () => '',
  log: { info() {}, warn() {} },
};

interface Owner {
  kind: string;
  name: string;
}

interface RawStep {
  code: string;
  settings: Record<string, unknown>;
  /** The budget of the step's promise (documents.ts checked its range). */
  timeoutMs?: number | undefined;
}

/**
 * Where a step is compiled: the chains it is nested in, whether it is under a Continue node
 * (a chain it binds included), and whether the route runs its steps (a cluster route).
 */
interface Place {
  stack: string[];
  continued: boolean;
  runs: boolean;
}

/**
 * Checks steps against the registry and inlines `orch` chains, for one tenant. Each
 * orch entity's own structure is checked once; references are checked where they are
 * made (missing, cyclic, deeper than MAX_CHAIN_DEPTH chains from the route).
 */
export class StepCompiler {
  private readonly orders = new Map<string, ChainUnit[] | null>();
  private readonly neverRuns = new ChainNeverRuns();

  constructor(
    private readonly tenant: string,
    private readonly clusters: ReadonlySet<string>,
    private readonly orchs: ReadonlyMap<string, OrchDoc>,
    private readonly issues: CompileIssue[],
    /** Where a route's steps placed after one that answers every request are warned about (a chain's nodes: chainWarnings). */
    private readonly warnings: CompileIssue[],
    /** Codes the tenant disabled: using one is an issue until it is enabled again. */
    private readonly disabled: ReadonlySet<string> = new Set(),
    /** The environment variables the tenant's steps may name; null: not checked (another tenant's published state). */
    private readonly secrets: SecretPolicy | null = null,
    /** The rule refusing a service URL's literal address (forward-auth, http-callout), or null. */
    private readonly urlDenied?: (url: string) => string | null,
    /** Whether worker.json has `redis`: without it a step that counts there is an issue. */
    private readonly redis = true,
    /** The steps this gateway knows (built-ins and worker.json's packages). */
    private readonly steps: StepRegistry = BUILTINS,
    /** Whether worker.json `steps.tenants` is checked (the publishing tenant's own compile). */
    private readonly governed = false,
  ) {}

  /** Checks every orch entity on its own, referenced or not: structure, settings, and its refs (missing, cyclic). */
  checkChains(): void {
    for (const [name, doc] of this.orchs) {
      this.orderOf(name, doc);
      doc.nodes.forEach((n, i) => this.checkSettings({ kind: 'orch', name }, `/nodes/${i}`, `/nodes/${i}/step`, n.step, n.settings));
    }
    const done = new Set<string>();
    for (const name of this.orchs.keys()) this.walkRefs(name, [], done);
  }

  /**
   * Follows a chain's orch refs depth-first, to any depth (a ring of six chains is a cycle
   * too, whatever the depth limit); a ref already on the stack is a cycle. `done`: chains
   * whose refs were all followed.
   */
  private walkRefs(name: string, stack: string[], done: Set<string>): void {
    if (done.has(name)) return;
    const doc = this.orchs.get(name)!;
    const path = [...stack, name];
    doc.nodes.forEach((n, i) => {
      const ref = n.step === 'orch' ? (n.settings as { ref?: unknown }).ref : undefined;
      if (typeof ref !== 'string') return;
      const at = `/nodes/${i}/settings/ref`;
      if (path.includes(ref)) this.issue({ kind: 'orch', name }, at, 'Compile.Orch.Cycle', `orch ${ref} refers back to itself: ${[...path.slice(path.indexOf(ref)), ref].join(' -> ')}`);
      else if (!this.orchs.has(ref)) this.issue({ kind: 'orch', name }, at, 'Compile.Orch.Missing', `no orch ${ref} in this tenant`);
      else this.walkRefs(ref, path, done);
    });
    done.add(name);
  }

  /**
   * Compiles a route's steps into runtime steps; null when any issue was found. `runs`:
   * whether the route runs them (a cluster route), so a step after one that always answers
   * is worth a warning.
   */
  compile(steps: readonly RawStep[], owner: Owner, base: string, bucket: string, runs = true): CompiledStep[] | null {
    const out: CompiledStep[] = [];
    const units: RunUnit[] = [];
    let ok = true;
    steps.forEach((s, i) => {
      const c = this.compileOne(s, owner, `${base}/${i}`, bucket, { stack: [], continued: false, runs });
      if (!c) return void (ok = false);
      out.push(...c);
      units.push(stepUnit(base, i, s, c));
    });
    if (ok && runs) this.warnings.push(...neverRunsWarnings(owner, units));
    return ok ? out : null;
  }

  /** One step at pointer `at`: a runtime step, or an inlined chain for `orch`. */
  private compileOne(s: RawStep, owner: Owner, at: string, bucket: string, place: Place): CompiledStep[] | null {
    const codeAt = owner.kind === 'orch' ? `${at}/step` : `${at}/code`;
    const settings = this.checkSettings(owner, at, codeAt, s.code, s.settings);
    if (settings === undefined) return null;
    const b = `${bucket}${at}`;
    if (s.code === 'orch') {
      // A binding is no step of its own: a budget belongs on the chain's nodes.
      if (s.timeoutMs !== undefined) {
        this.issue(owner, `${at}/timeoutMs`, 'Compile.Step.Settings', "orch: timeoutMs is a step's budget; give it on the chain's nodes");
        return null;
      }
      return this.inline((settings as { ref: string }).ref, owner, `${at}/settings/ref`, b, place);
    }
    // The budget of its promise: the route's (or node's), else the step's own default; none: no budget.
    const def = this.steps.get(s.code)!;
    const timeoutMs = s.timeoutMs ?? def.timeoutMs;
    // The step's kept state is its place, its code (and package) and its settings: another step in the same place never gets it.
    const who = def.origin ? `${def.origin.package}/${s.code}` : s.code;
    return [{ kind: 'step', code: s.code, settings, tenant: this.tenant, bucket: `${b}:${who}@${canonical(settings)}`, ...(timeoutMs !== undefined ? { timeoutMs } : {}) }];
  }

  private inline(ref: string, owner: Owner, at: string, bucket: string, place: Place): CompiledStep[] | null {
    const { stack, continued, runs } = place;
    if (stack.includes(ref)) {
      this.issue(owner, at, 'Compile.Orch.Cycle', `orch ${ref} refers back to itself: ${[...stack, ref].join(' -> ')}`);
      return null;
    }
    if (stack.length + 1 > MAX_CHAIN_DEPTH) {
      this.issue(owner, at, 'Compile.Orch.Depth', `chain ${[...stack, ref].join(' -> ')} nests ${stack.length + 1} chains; at most ${MAX_CHAIN_DEPTH}`);
      return null;
    }
    const doc = this.orchs.get(ref);
    if (!doc) {
      this.issue(owner, at, 'Compile.Orch.Missing', `no orch ${ref} in this tenant`);
      return null;
    }
    const units = this.orderOf(ref, doc);
    if (!units) return null;
    const chain = { kind: 'orch', name: ref };
    const next = [...stack, ref];
    const node = (i: number) => {
      const n = doc.nodes[i]!;
      const goesOn = n.failureStrategy === 'Continue';
      const c = this.compileOne({ code: n.step, settings: n.settings, timeoutMs: n.timeoutMs }, chain, `/nodes/${i}`, `${bucket}>${ref}`, { stack: next, continued: continued || goesOn, runs });
      return c && goesOn ? c.map(markContinue) : c;
    };
    const out: CompiledStep[] = [];
    const runUnits: RunUnit[] = [];
    for (const u of units) {
      if (u.type === 'node') {
        const c = node(u.index);
        if (!c) return null;
        out.push(...c);
        runUnits.push(nodeUnit(doc, u.index, c));
        continue;
      }
      const g = doc.groups![u.index]!;
      const members: CompiledStep[][] = [];
      // Members in nodes[] order, whatever order the group lists them in: "node order"
      // decides whose changes apply first (all) and who is asked first (any).
      const indexes = g.nodes.map((id) => doc.nodes.findIndex((n) => n.id === id)).sort((a, b) => a - b);
      for (const i of indexes) {
        const c = node(i);
        if (!c) return null;
        members.push(c);
      }
      const group: CompiledStep = { kind: 'group', id: g.id, merge: g.merge ?? 'all', members };
      out.push(group);
      runUnits.push(groupUnit(doc, g.id, g.merge ?? 'all', indexes, group));
    }
    if (runs) this.neverRuns.record(ref, runUnits, continued);
    return out;
  }

  /** The chains' nodes that never run, wherever the running routes compiled so far inline them. */
  chainWarnings(): CompileIssue[] {
    return this.neverRuns.warnings();
  }

  private orderOf(name: string, doc: OrchDoc): ChainUnit[] | null {
    if (this.orders.has(name)) return this.orders.get(name)!;
    const { units, problems } = chainOrder(doc);
    for (const p of problems) this.issue({ kind: 'orch', name }, p.pointer, p.code, p.message);
    const result = problems.length ? null : units;
    this.orders.set(name, result);
    return result;
  }

  /** The step's parsed settings, or undefined (issue recorded) when the code or settings are bad. */
  private checkSettings(owner: Owner, at: string, codeAt: string, code: string, settings: unknown): unknown {
    const def = this.steps.get(code);
    if (!def) {
      this.issue(owner, codeAt, 'Compile.Step.Unknown', `unknown step code ${code}`);
      return undefined;
    }
    if (this.governed && !this.steps.usableBy(code, this.tenant)) {
      this.issue(owner, codeAt, 'Compile.Step.NotAllowed', `step ${code} (package ${def.origin?.package}) is not allowed for tenant ${this.tenant} (worker.json steps.tenants)`);
      return undefined;
    }
    if (this.disabled.has(code)) {
      this.issue(owner, codeAt, 'Compile.Step.Disabled', `step ${code} is disabled for this tenant (plugin enable ${code})`);
      return undefined;
    }
    const r = checkStepSettings(def.schema, settings);
    if (!r.ok) {
      for (const i of r.issues) this.issue(owner, `${at}/settings${i.pointer}`, 'Compile.Step.Settings', `${code}: ${i.message}`);
      return undefined;
    }
    const missing = (def.clusterRefs?.(r.output) ?? []).filter((ref) => !this.clusters.has(ref.name));
    for (const ref of missing) this.issue(owner, `${at}/settings${ref.pointer}`, 'Compile.Step.Cluster', `${code}: no cluster ${ref.name} in this tenant`);
    if (missing.length) return undefined;
    // Before the trial build, which would read the variable: the refusal (its message too)
    // must not depend on whether it exists.
    const secrets = this.secrets;
    const refused = secrets ? (def.envRefs?.(r.output) ?? []).filter((ref) => !mayName(secrets, this.tenant, ref.name)) : [];
    for (const ref of refused) {
      this.issue(owner, `${at}/settings${ref.pointer}`, 'Compile.Step.SecretNotAllowed', `${code}: this environment variable is not allowed for tenant ${this.tenant} (worker.json secrets.env lists the ones it may name)`);
    }
    if (refused.length) return undefined;
    if (!this.redis && def.needsRedis?.(r.output)) {
      this.issue(owner, `${at}/settings/scope`, 'Compile.Step.Settings', `${code}: scope cluster counts in worker.json redis, which this gateway does not have`);
      return undefined;
    }
    // The URLs a step calls: the same upstream policy as clusters' targets.
    let deniedAny = false;
    for (const ref of def.urlRefs?.(r.output) ?? []) {
      const denied = this.urlDenied?.(ref.url);
      if (!denied) continue;
      this.issue(owner, `${at}/settings${ref.pointer}`, 'Compile.Step.UrlDenied', `${code}: ${ref.url} is refused: ${denied}`);
      deniedAny = true;
    }
    if (deniedAny) return undefined;
    // Build the step once here, as every worker will: settings the schema passes but the
    // runtime cannot build must be an issue now, not workers failing a committed generation.
    if (def.create && !def.compileTime) {
      try {
        def.create(r.output, { bucket: TRIAL_BUCKET, tenant: this.tenant, env: TRIAL_ENV, state: freshState });
      } catch (err) {
        this.issue(owner, `${at}/settings`, 'Compile.Step.Settings', `${code}: cannot be built: ${(err as Error).message}`);
        return undefined;
      }
    }
    return r.output;
  }

  private issue(owner: Owner, at: string, code: CompileIssueCode, message: string): void {
    const dup = this.issues.some((i) => i.kind === owner.kind && i.name === owner.name && i.pointer === at && i.code === code);
    if (!dup) this.issues.push({ kind: owner.kind, name: owner.name, pointer: at, code, message });
  }
}

/** Continue applies to everything a node expands to (a nested chain included). */
function markContinue(s: CompiledStep): CompiledStep {
  return s.kind === 'step' ? { ...s, continue: true } : { ...s, members: s.members.map((m) => m.map(markContinue)) };
}
