import { DURATION_BUCKETS, GRPC_STATUS_LABELS, INTROSPECTION_CALLS, INTROSPECTION_EVENTS, METRIC_METHODS, STATUS_CLASSES, UPSTREAM_ERROR_KINDS, routeKey, upstreamKey, type HistogramDelta, type MetricsDelta } from '../contracts/metrics.js';
import type { Exposition } from '../shared/metrics-exposition.js';

class HistogramTotal {
  readonly buckets = new Array<number>(DURATION_BUCKETS.length + 1).fill(0);
  sum = 0;

  add(d: HistogramDelta): void {
    for (let i = 0; i < this.buckets.length; i++) this.buckets[i]! += d.buckets[i] ?? 0;
    this.sum += d.sum;
  }
}

interface RouteTotal {
  tenant: string;
  route: string;
  requests: number[];
  duration: HistogramTotal;
  bytesReceived: number;
  bytesSent: number;
  /** `step status` -> count. */
  rejections: Map<string, number>;
  /** gRPC calls per GRPC_STATUS_LABELS index; null while the route had none. */
  grpc: number[] | null;
  /** `step reason` -> count. */
  failures: Map<string, number>;
  /** oauth-introspection's counts per INTROSPECTION_EVENTS index; null while the route had none. */
  introspection: number[] | null;
}

interface UpstreamTotal {
  tenant: string;
  /** The cluster's own name. */
  cluster: string;
  target: string;
  duration: HistogramTotal;
  errors: number[];
}

/**
 * The data plane's counters summed over every worker since the supervisor started: the
 * workers' deltas added as they arrive, so a replaced worker's counts stay counted.
 */
export class DataMetricsTotals {
  private readonly routes = new Map<string, RouteTotal>();
  private readonly upstreams = new Map<string, UpstreamTotal>();

  add(delta: MetricsDelta): void {
    for (const d of delta.routes) {
      const key = routeKey(d.tenant, d.route);
      let t = this.routes.get(key);
      if (!t) {
        t = { tenant: d.tenant, route: d.route, requests: new Array<number>(METRIC_METHODS.length * 5).fill(0), duration: new HistogramTotal(), bytesReceived: 0, bytesSent: 0, rejections: new Map(), grpc: null, failures: new Map(), introspection: null };
        this.routes.set(key, t);
      }
      for (const [i, n] of d.requests) if (i >= 0 && i < t.requests.length) t.requests[i]! += n;
      t.duration.add(d.duration);
      t.bytesReceived += d.bytesReceived;
      t.bytesSent += d.bytesSent;
      for (const [step, status, n] of d.rejections) {
        const k = `${step} ${status}`;
        t.rejections.set(k, (t.rejections.get(k) ?? 0) + n);
      }
      for (const [step, reason, n] of d.failures ?? []) {
        const k = `${step} ${reason}`;
        t.failures.set(k, (t.failures.get(k) ?? 0) + n);
      }
      if (d.introspection !== undefined) {
        const c = (t.introspection ??= new Array<number>(INTROSPECTION_EVENTS.length).fill(0));
        for (const [i, n] of d.introspection) if (i >= 0 && i < c.length) c[i]! += n;
      }
      if (d.grpc !== undefined) {
        const g = (t.grpc ??= new Array<number>(GRPC_STATUS_LABELS.length).fill(0));
        for (const [i, n] of d.grpc) if (i >= 0 && i < g.length) g[i]! += n;
      }
    }
    for (const d of delta.upstreams) {
      const key = upstreamKey(`${d.tenant}/${d.cluster}`, d.target);
      let t = this.upstreams.get(key);
      if (!t) this.upstreams.set(key, (t = { tenant: d.tenant, cluster: d.cluster, target: d.target, duration: new HistogramTotal(), errors: UPSTREAM_ERROR_KINDS.map(() => 0) }));
      t.duration.add(d.duration);
      d.errors.forEach((n, i) => {
        if (i < t.errors.length) t.errors[i]! += n;
      });
    }
  }

  /** Drops the series of routes and targets not in `keys` (servedKeys of the generation now served). */
  keepOnly(keys: { routes: Set<string>; upstreams: Set<string> }): void {
    for (const k of this.routes.keys()) if (!keys.routes.has(k)) this.routes.delete(k);
    for (const k of this.upstreams.keys()) if (!keys.upstreams.has(k)) this.upstreams.delete(k);
  }

  /** The data plane's families, in Prometheus text. */
  write(out: Exposition): void {
    const routes = [...this.routes.values()];
    out.family('switchyard_requests_total', 'counter', 'Data-plane requests that ended, by route, method and status class (499: the client left).');
    for (const r of routes) {
      r.requests.forEach((n, i) => {
        if (n > 0) out.sample('switchyard_requests_total', { tenant: r.tenant, route: r.route, method: METRIC_METHODS[Math.floor(i / 5)]!, status_class: STATUS_CLASSES[i % 5]! }, n);
      });
    }
    out.family('switchyard_request_duration_seconds', 'histogram', 'From a request\'s arrival to its end, by route.');
    for (const r of routes) out.histogram('switchyard_request_duration_seconds', { tenant: r.tenant, route: r.route }, DURATION_BUCKETS, r.duration.buckets, r.duration.sum);
    out.family('switchyard_bytes_received_total', 'counter', 'Request body bytes read from clients, by route.');
    for (const r of routes) out.sample('switchyard_bytes_received_total', { tenant: r.tenant, route: r.route }, r.bytesReceived);
    out.family('switchyard_bytes_sent_total', 'counter', 'Response body bytes sent to clients, by route.');
    for (const r of routes) out.sample('switchyard_bytes_sent_total', { tenant: r.tenant, route: r.route }, r.bytesSent);
    out.family('switchyard_step_rejections_total', 'counter', 'Requests a step refused, by route, step and status.');
    for (const r of routes) {
      for (const [k, n] of r.rejections) {
        const sp = k.lastIndexOf(' ');
        out.sample('switchyard_step_rejections_total', { tenant: r.tenant, route: r.route, step: k.slice(0, sp), status: k.slice(sp + 1) }, n);
      }
    }
    out.family('switchyard_step_failures_total', 'counter', 'Requests a step failed, by route, step and reason (threw: 500 Svc.Data.StepFailed; timeout: past its budget, 504 Svc.Data.StepTimeout).');
    for (const r of routes) {
      for (const [k, n] of r.failures) {
        const sp = k.lastIndexOf(' ');
        out.sample('switchyard_step_failures_total', { tenant: r.tenant, route: r.route, step: k.slice(0, sp), reason: k.slice(sp + 1) }, n);
      }
    }
    out.family('switchyard_grpc_calls_total', 'counter', 'gRPC calls that ended, by route and the grpc-status their client got (none: no status reached it).');
    for (const r of routes) {
      r.grpc?.forEach((n, i) => {
        if (n > 0) out.sample('switchyard_grpc_calls_total', { tenant: r.tenant, route: r.route, grpc_status: GRPC_STATUS_LABELS[i]! }, n);
      });
    }
    writeIntrospection(routes, out);
    const upstreams = [...this.upstreams.values()];
    out.family('switchyard_upstream_duration_seconds', 'histogram', 'Time to the answer\'s head, per attempt, by tenant, cluster and target.');
    for (const u of upstreams) out.histogram('switchyard_upstream_duration_seconds', { tenant: u.tenant, cluster: u.cluster, target: u.target }, DURATION_BUCKETS, u.duration.buckets, u.duration.sum);
    out.family('switchyard_upstream_errors_total', 'counter', 'Upstream attempts that failed (kind: connect, tls, timeout, reset, other) or were answered 5xx (status).');
    for (const u of upstreams) {
      u.errors.forEach((n, i) => {
        if (n > 0) out.sample('switchyard_upstream_errors_total', { tenant: u.tenant, cluster: u.cluster, target: u.target, kind: UPSTREAM_ERROR_KINDS[i]! }, n);
      });
    }
  }
}

/** oauth-introspection's two families: its calls by answer, and the requests an endpoint it could not ask decided. */
function writeIntrospection(routes: readonly RouteTotal[], out: Exposition): void {
  out.family('switchyard_introspection_calls_total', 'counter', 'Calls of oauth-introspection steps to their endpoint, by route and answer (active, inactive, error: no usable answer).');
  for (const r of routes) {
    for (let i = 0; i < INTROSPECTION_CALLS; i++) {
      const n = r.introspection?.[i] ?? 0;
      if (n > 0) out.sample('switchyard_introspection_calls_total', { tenant: r.tenant, route: r.route, result: INTROSPECTION_EVENTS[i]! }, n);
    }
  }
  out.family('switchyard_introspection_fail_static_total', 'counter', 'Requests of oauth-introspection steps whose endpoint could not be asked, by route and outcome (stale: passed on a recent active answer; unavailable: refused 503).');
  for (const r of routes) {
    for (let i = INTROSPECTION_CALLS; i < INTROSPECTION_EVENTS.length; i++) {
      const n = r.introspection?.[i] ?? 0;
      if (n > 0) out.sample('switchyard_introspection_fail_static_total', { tenant: r.tenant, route: r.route, outcome: INTROSPECTION_EVENTS[i]! }, n);
    }
  }
}
