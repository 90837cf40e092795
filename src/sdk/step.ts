/**
 * `switchyard/step`: what a step package imports. A package step has the built-ins' shape
 * (a code, a summary, a valibot schema for its settings, the answers it may give, a factory
 * called once per generation with checked settings) and reaches everything outside the
 * request through its StepEnv, never through its own sockets or process.env.
 */
import type * as v from 'valibot';
import type { Flow, StepOutcome, StepReply } from '../steps/step.js';

/** The gateway's own valibot: a package's schemas are read by the same copy that checks them at publish. */
export * as v from 'valibot';

export type { Flow, StepRequest, ResponseHead, StepReply, StepOutcome, CollectedAnswer, ClientCertificate } from '../steps/step.js';

/** An answer the step may give: its status, the envelope's error code, and when (docs; the default message). */
export interface StepAnswerSpec {
  status: number;
  /** `Pkg.Reason`-style; never `Svc.`, which is the gateway's own. */
  code: string;
  when: string;
}

/** The per-request function: sync steps return their outcome and never pay for a promise. */
export type StepHandler = (flow: Flow) => StepOutcome | Promise<StepOutcome>;

/** A request to one of the tenant's clusters, sent through the gateway's connection pools. */
export interface SubRequestInit {
  method?: string;
  /** The path on the cluster's targets, with its query if any (`/verify?x=1`). */
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** The whole call's bound; default and ceiling: the step's budget. */
  timeoutMs?: number;
}

export interface SubResponse {
  status: number;
  /** Lower-case names; repeated ones joined with ', '. */
  headers: Record<string, string>;
  body: Buffer;
}

export interface StepLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** Everything a package step reaches outside the request; one per step in a route, per worker. */
export interface StepEnv {
  readonly tenant: string;
  /** The route (or orch chain) the step sits in, as `tenant/name`. */
  readonly route: string;
  /** Lines carry the step's code, tenant and route. */
  readonly log: StepLog;
  /**
   * Per-route state: the same object while the step's place and settings stay unchanged,
   * across publishes (its own tenant's and every other's); fresh when they change. Per worker;
   * one object per step (call it once, in `create`).
   */
  state<T>(make: () => T): T;
  /**
   * An environment variable the step declared with `secrets(settings)` and worker.json
   * `secrets.env` allows this tenant (checked at publish); undefined when unset. Any other
   * name throws.
   */
  secret(name: string): string | undefined;
  /**
   * Calls a cluster the step declared with `clusters(settings)`, through the gateway's pools:
   * the upstream allow-list, the cluster's TLS and timeouts, balancing and metrics apply.
   */
  request(cluster: string, init: SubRequestInit): Promise<SubResponse>;
  /**
   * A declared answer (`answers`) as the JSON error envelope every gateway error has
   * (`{code, message, traceId}`); `message` replaces the declared `when`.
   */
  answer(code: string, message?: string, headers?: Record<string, string>): StepReply;
}

export interface StepDefinition<S = unknown> {
  /** Lower case, `a-z0-9-`, 2 to 63 characters; must not be a built-in's or another package's. */
  code: string;
  summary: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a schema of any input type: settings arrive as parsed JSON
  settings: v.GenericSchema<any, S>;
  answers: StepAnswerSpec[];
  /** Markdown shown under the summary in the generated docs. */
  docs?: string;
  /** Example settings (checked against the schema; shown in the docs and the console). */
  example?: Record<string, unknown>;
  /** The handler's budget when it returns a promise, in ms (at most 30,000; default 30,000); a route's `timeoutMs` overrides it. */
  timeoutMs?: number;
  /** The decision reads the request alone (no state, calls or randomness): `explain` runs it on its dry request. */
  pure?: boolean;
  /** Clusters the settings name: checked at publish against the tenant's clusters. */
  clusters?(settings: S): { pointer: string; name: string }[];
  /** Environment variables the settings name: checked at publish against worker.json `secrets.env`. */
  secrets?(settings: S): { pointer: string; name: string }[];
  /** Request headers the step sets from what it verified: the client's own values are dropped before the route's first step. */
  ownedHeaders?(settings: S): readonly string[];
  /** Called once per generation per worker (and once at publish, with an env whose calls do nothing); a throw is a publish issue. */
  create(settings: S, env: StepEnv): StepHandler;
}

/** Marks a package's step; the gateway reads the module's default export (one step or an array of them). */
export function defineStep<S>(def: StepDefinition<S>): StepDefinition<S> {
  return def;
}

/** A flow's answer helpers that need no env: a plain reply. */
export function reply(status: number, body: string | Buffer, headers?: Record<string, string>): StepReply {
  return { status, body, headers };
}
