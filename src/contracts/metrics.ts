import type { CompiledGeneration } from './generation.js';

/**
 * The data plane's counters as workers ship them to the supervisor (IPC, once a second):
 * deltas since the last shipment, only for what moved. The supervisor adds them up, so a
 * counter never goes down when a worker is replaced.
 */

/** The `method` label's values: the methods a data port takes; any other counts as `other`. */
export const METRIC_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE', 'CONNECT', 'other'] as const;
export const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const;
/** Upper bounds (seconds) of the duration histograms' buckets; +Inf follows. */
export const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;
/** How an upstream attempt failed: no connection, no TLS session, no answer in time, the connection cut, a 5xx answer, else. */
export const UPSTREAM_ERROR_KINDS = ['connect', 'tls', 'timeout', 'reset', 'status', 'other'] as const;
export type UpstreamErrorKind = (typeof UPSTREAM_ERROR_KINDS)[number];
/**
 * The `grpc_status` label's values: gRPC's codes 0..16, `other` for any other number an
 * upstream sent (bounded: an upstream cannot make series), `none` for a call whose client
 * got no grpc-status (it left first, or the answer carried none or was cut).
 */
export const GRPC_STATUS_LABELS = ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '10', '11', '12', '13', '14', '15', '16', 'other', 'none'] as const;

/** A grpc-status's index in GRPC_STATUS_LABELS (null: `none`). */
export function grpcStatusIndex(status: number | null): number {
  if (status === null) return GRPC_STATUS_LABELS.length - 1;
  return status >= 0 && status <= 16 && Number.isInteger(status) ? status : GRPC_STATUS_LABELS.length - 2;
}

/** Why a step failed a request: it threw or rejected (500 Svc.Data.StepFailed), or outlived its budget (504 Svc.Data.StepTimeout). */
export const STEP_FAILURE_REASONS = ['threw', 'timeout'] as const;
export type StepFailureReason = (typeof STEP_FAILURE_REASONS)[number];

/**
 * What oauth-introspection counts per route: its calls to the endpoint by answer (`active`,
 * `inactive`, `error`: none usable), and the requests an endpoint it could not ask decided
 * (`stale`: passed on a recent answer, fail static; `unavailable`: refused 503).
 */
export const INTROSPECTION_EVENTS = ['active', 'inactive', 'error', 'stale', 'unavailable'] as const;
export type IntrospectionEvent = (typeof INTROSPECTION_EVENTS)[number];
/** The first INTROSPECTION_CALLS events are calls (switchyard_introspection_calls_total); the rest, fail-static decisions. */
export const INTROSPECTION_CALLS = 3;

/** A histogram's movement: per bucket (not cumulative; DURATION_BUCKETS.length + 1 entries, the last +Inf) and the sum. */
export interface HistogramDelta {
  buckets: number[];
  sum: number;
}

export interface RouteDelta {
  /** '' and '' for requests no route took. */
  tenant: string;
  route: string;
  /** Per `METRIC_METHODS index * 5 + status class index`, requests that ended; sparse as [index, count] pairs. */
  requests: [number, number][];
  duration: HistogramDelta;
  bytesReceived: number;
  bytesSent: number;
  /** [step code, status, count]: answers a step refused the request with. */
  rejections: [string, number, number][];
  /** gRPC calls that ended, per GRPC_STATUS_LABELS index, sparse as [index, count] pairs; absent when none did. */
  grpc?: [number, number][];
  /** [step code, reason, count]: requests a step failed (threw, or outlived its budget); absent when none did. */
  failures?: [string, StepFailureReason, number][];
  /** oauth-introspection's counts per INTROSPECTION_EVENTS index, sparse as [index, count] pairs; absent when none moved. */
  introspection?: [number, number][];
}

export interface UpstreamDelta {
  /** The cluster's tenant and its own name: two labels, as a route's series carry (clusterNames). */
  tenant: string;
  cluster: string;
  /** host:port. */
  target: string;
  /** Time to the answer's head, per attempt that got one. */
  duration: HistogramDelta;
  /** Per UPSTREAM_ERROR_KINDS index. */
  errors: number[];
}

export interface MetricsDelta {
  routes: RouteDelta[];
  upstreams: UpstreamDelta[];
}

/** A route's key in the meters and totals: `tenant/name` ('/' for requests no route took). */
export const routeKey = (tenant: string, route: string): string => `${tenant}/${route}`;
/** A target's key: `tenant/cluster host:port` (`cluster`: the generation's key of the cluster, `tenant/name`). */
export const upstreamKey = (cluster: string, target: string): string => `${cluster} ${target}`;

/**
 * A cluster's tenant and own name from its key in the generation (`tenant/name`; a tenant
 * name has no `/`): every series naming a cluster carries them as `tenant` and `cluster`.
 */
export function clusterNames(key: string): { tenant: string; cluster: string } {
  const slash = key.indexOf('/');
  return { tenant: key.slice(0, slash), cluster: key.slice(slash + 1) };
}

/**
 * The routes and targets a generation serves. Series of the others (a deleted or renamed
 * route, a replaced target) are dropped once it is served, so renaming does not add series
 * without end; a route's counts start again if it comes back, which `rate()` handles.
 */
export function servedKeys(gen: CompiledGeneration): { routes: Set<string>; upstreams: Set<string> } {
  const routes = new Set<string>([routeKey('', '')]);
  for (const [tenant, t] of Object.entries(gen.tenants)) for (const r of t.routes) routes.add(routeKey(tenant, r.name));
  const upstreams = new Set<string>();
  for (const [cluster, c] of Object.entries(gen.clusters)) for (const target of c.targets) upstreams.add(upstreamKey(cluster, target));
  return { routes, upstreams };
}
