import type { Upstream } from '../contracts/upstream.js';
import type { IntrospectionEvent } from '../contracts/metrics.js';
import type { StateOf } from './step-state.js';
import type { KeySetsView } from './identity/key-set-view.js';

/*
 * What a step factory gets from the worker besides its settings (StepContext, StepEnv), and
 * the services behind it. Re-exported by step.ts, the step contract.
 */

/** Worker-side services a step factory may use; built once per worker. */
export interface StepEnv {
  rateLimits: RateLimitClient;
  /** A fresh trace id, from the same source as the worker's own error answers. */
  traceId: () => string;
  /** Where steps log (access-log, Continue failures). */
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
  /** A connection pool to a cluster (`tenant/name`) of the generation being served. */
  upstream?: (cluster: string) => Upstream;
  /**
   * A target of a cluster (`tenant/name`) picked for a step's own call, with what the call
   * reports back: its answer or failure counts in the cluster's upstream metrics and outlier
   * detection as a proxied attempt's does.
   */
  upstreamCall?: (cluster: string) => UpstreamCall;
  /** Keep-alive connections to a service URL a step calls (forward-auth, http-callout), per tenant. */
  servicePool?: (tenant: string, url: string) => Upstream;
  /** A [0, 1) source for sampling steps; tests may fix it. Default Math.random. */
  random?: () => number;
  /** Key sets the supervisor fetches and pushes (jwt-auth `jwksUri`/`issuer`); absent outside a worker (trial builds, explain). */
  keySets?: KeySetsView;
}

/** A step's call to a cluster's target (StepEnv.upstreamCall). */
export interface UpstreamCall {
  readonly target: Upstream;
  /** The answer's head came after `ms`. */
  answered(ms: number, status: number): void;
  /** No answer: the call failed. */
  failed(err: Error): void;
}

export interface RateLimitDenied {
  ok: false;
  retryAfterSeconds: number;
  /** A cluster-wide bucket whose store (Redis) could not be asked, with onStoreDown "deny": 503, not 429. */
  unavailable?: true;
}

/** Token buckets leased from the supervisor: node-wide (supervisor/rate-limit-leases.ts) or, with `cluster`, fleet-wide in Redis. */
export interface RateLimitClient {
  /** `cluster`: the bucket is fleet-wide, and what to do when its store cannot be asked. */
  acquire(bucket: string, requestsPerSecond: number, burst: number, cluster?: { onStoreDown: 'allow' | 'deny' }): true | RateLimitDenied | Promise<true | RateLimitDenied>;
  /** Tokens left in the node-wide bucket as last seen by this worker (an estimate between leases). */
  remaining(bucket: string): number;
}

/** What a step factory gets besides its settings. */
export interface StepContext {
  /**
   * A stable key of the step: its tenant, route, place and canonical settings. Node-wide
   * state (rate-limit's leased buckets) is keyed by it.
   */
  bucket: string;
  tenant: string;
  env: StepEnv;
  /**
   * The step's per-route state in this worker: the object `make` built for this bucket,
   * kept across publishes while the bucket is unchanged, fresh when it changes (and never
   * kept by the compiler's trial build). One object per step: call it once.
   */
  state: StateOf;
  /** The route's name, for the step's own log lines; absent outside a worker's route (the compiler's trial build, explain). */
  route?: string;
  /** Counters the step moves in its route's metrics; absent where nothing is counted (worker.json metrics off, trial build, explain). */
  counters?: StepCounters;
}

/** A route's counters a built-in step moves itself (docs/observability.md). */
export interface StepCounters {
  /** oauth-introspection: a call's answer, or a request an unreachable endpoint decided. */
  introspection(event: IntrospectionEvent): void;
}
