/**
 * `switchyard/testing`: a package step run without a gateway or a socket. Its settings are
 * checked as publish checks them, its handler is built once with a test StepEnv, and each
 * synthetic request shows what the step did: its answer, or the request the upstream would
 * get and the response hooks it left.
 */
import type { ResponseHead, StepReply } from '../steps/step.js';
import type { StepDefinition, StepHandler } from './step.js';
import { checkStepSettings } from '../shared/settings-issues.js';
import { withTraceId } from '../steps/reply.js';
import { TestFlow, type TestRequest } from './test-flow.js';
import { TestStates, testEnv, type ClusterCall, type FakeCluster, type LogLine } from './test-env.js';

export { TestFlow, TestStates };
export type { TestRequest, FakeCluster, ClusterCall, LogLine };
export type { FakeRequest, FakeResponse } from './test-env.js';

/** A publish issue about a step's settings: the pointer inside the step (`/settings/...`) and the compiler's words. */
export interface SettingsIssue {
  pointer: string;
  code: 'Compile.Step.Settings';
  message: string;
}

/** Thrown by stepTester for settings publish would refuse; `issues` lists them all. */
export class StepSettingsError extends Error {
  constructor(readonly issues: SettingsIssue[]) {
    super(`settings refused:\n${issues.map((i) => `  ${i.pointer}: ${i.message}`).join('\n')}`);
    this.name = 'StepSettingsError';
  }
}

/** The issues publish would report for these settings (schema only: [] when they fit). */
export function checkSettings<S>(def: StepDefinition<S>, settings: unknown): SettingsIssue[] {
  const r = checkStepSettings(def.settings, settings);
  return r.ok ? [] : r.issues.map((i) => ({ pointer: `/settings${i.pointer}`, code: 'Compile.Step.Settings', message: `${def.code}: ${i.message}` }));
}

export interface TesterOptions {
  /** Default 'default'. */
  tenant?: string;
  /** `tenant/name`; default `<tenant>/test`. */
  route?: string;
  /** Environment variables the step may read (only the names its secrets(settings) declares). */
  secrets?: Record<string, string | undefined>;
  /** Fake clusters by name (only the names its clusters(settings) declares are reachable). */
  clusters?: Record<string, FakeCluster>;
  /** Per-route state to share across builds; default a fresh store. */
  states?: TestStates;
  /** The trace id written into answers' envelopes; default 'test-trace'. */
  traceId?: string;
}

/** A response head as the client gets it, with lookups. */
export interface TestHead {
  status: number;
  /** Lower-case names, in order; a name may repeat (set-cookie). */
  headers: [string, string][];
  /** The first value of a header. */
  header(name: string): string | undefined;
  /** Every value of a header. */
  headerAll(name: string): string[];
}

/** The step's answer as sent: the head after response hooks, and the body with the trace id written in. */
export interface TestReply extends TestHead {
  body: Buffer;
  text: string;
  json<T = unknown>(): T;
  /** The answer is the step's service (StepReply.served), not a refusal. */
  served: boolean;
  /** The StepReply the handler returned. */
  reply: StepReply;
}

export interface TestResult {
  /** The step's answer, or null when the request goes on upstream. */
  answered: TestReply | null;
  /** The request the upstream would get: headers after the step's edits, the client's owned headers dropped. */
  upstream: { method: string; path: string; query: string | null; headers: Record<string, string> };
  vars: Record<string, unknown>;
  /**
   * An upstream response head (default 200, no headers) through the response hooks and
   * added headers; with a body, through the collectors too. Throws when the step answered.
   */
  response(head?: { status?: number; headers?: Record<string, string> | [string, string][]; body?: string | Buffer }): TestHead & { body?: Buffer };
  /** The flow the handler ran on, for what the result does not show. */
  flow: TestFlow;
}

export interface StepTester<S> {
  /** The settings after the schema (defaults filled in, transforms applied). */
  readonly settings: S;
  /** Lines the step logged, in order. */
  readonly logs: LogLine[];
  /** Calls the step made to clusters, in order. */
  readonly calls: ClusterCall[];
  /** This build's per-route state (undefined until the step makes it). */
  state<T>(): T | undefined;
  run(request: TestRequest): Promise<TestResult>;
}

/**
 * Checks `settings` as publish does (throws StepSettingsError listing every issue, as
 * Compile.Step.Settings issues at `/settings/...`; a throw from `create` is one too), builds
 * the handler once, and runs it on synthetic requests. A handler that throws or rejects
 * makes `run` reject (the gateway answers such a request 500 Svc.Data.StepFailed).
 */
export function stepTester<S>(def: StepDefinition<S>, settings: unknown, options: TesterOptions = {}): StepTester<S> {
  const checked = checkStepSettings(def.settings, settings);
  if (!checked.ok) throw new StepSettingsError(checkSettings(def, settings));
  const parsed = checked.output;
  const tenant = options.tenant ?? 'default';
  const states = options.states ?? new TestStates();
  const { env, record } = testEnv(def, parsed, { tenant, route: options.route ?? `${tenant}/test`, secrets: options.secrets ?? {}, clusters: options.clusters ?? {}, states });
  let handler: StepHandler;
  try {
    handler = def.create(parsed, env);
  } catch (err) {
    throw new StepSettingsError([{ pointer: '/settings', code: 'Compile.Step.Settings', message: `${def.code}: cannot be built: ${(err as Error).message}` }]);
  }
  const owned = (def.ownedHeaders?.(parsed) ?? []).map((h) => h.toLowerCase());
  const traceId = options.traceId ?? 'test-trace';
  return {
    settings: parsed,
    logs: record.logs,
    calls: record.calls,
    state: <T>() => states.values.get(record.stateKey) as T | undefined,
    async run(request) {
      const flow = new TestFlow(request, owned);
      flow.answeredBy = def.code;
      const reply = await handler(flow);
      const answered = reply === undefined ? null : testReply(flow, reply, traceId);
      if (answered) flow.end(answered.status, true);
      const preview = flow.preview();
      const headers: Record<string, string> = {};
      for (const [k, v] of preview.headers) headers[k] = k in headers ? `${headers[k]}, ${v}` : v;
      return {
        answered,
        upstream: { method: preview.method, path: preview.path, query: preview.query, headers },
        vars: flow.vars,
        flow,
        response(head = {}) {
          if (answered) throw new Error(`${def.code} answered ${answered.status}: there is no upstream response`);
          const pairs = head.headers === undefined ? [] : Array.isArray(head.headers) ? head.headers : Object.entries(head.headers);
          const h: ResponseHead = { status: head.status ?? 200, headers: pairs.map(([k, v]) => [k.toLowerCase(), v]) };
          let body: Buffer | undefined = head.body === undefined ? undefined : Buffer.from(head.body);
          if (body !== undefined) ({ status: h.status, headers: h.headers, body } = flow.collected({ status: h.status, headers: h.headers, body }));
          flow.applyResponseHooks(h);
          flow.end(h.status, false);
          return { ...lookups(h), body };
        },
      };
    },
  };
}

function lookups(head: ResponseHead): TestHead {
  return {
    status: head.status,
    headers: head.headers,
    header: (name) => head.headers.find(([k]) => k === name.toLowerCase())?.[1],
    headerAll: (name) => head.headers.filter(([k]) => k === name.toLowerCase()).map(([, v]) => v),
  };
}

function testReply(flow: TestFlow, reply: StepReply, traceId: string): TestReply {
  const body = Buffer.from(withTraceId(reply, traceId));
  return {
    ...lookups(flow.replyHead(reply)),
    body,
    text: body.toString('utf8'),
    json: <T>() => JSON.parse(body.toString('utf8')) as T,
    served: reply.served === true,
    reply,
  };
}
