import { clusterNames, GRPC_STATUS_LABELS, INTROSPECTION_EVENTS, grpcStatusIndex, type IntrospectionEvent, routeKey, upstreamKey, type MetricsDelta, type RouteDelta, type StepFailureReason, type UpstreamDelta } from '../../contracts/metrics.js';
import { methodIndex, RouteMeter, UpstreamMeter } from './meters.js';

/** 1xx..5xx as 0..4; anything outside (a 499 of a client that left is 4xx) clamped. */
function classIndex(status: number): number {
  const c = ((status / 100) | 0) - 1;
  return c < 0 ? 0 : c > 4 ? 4 : c;
}

/**
 * One worker's data-plane counters, kept in plain arrays per route and per upstream
 * target (meters live across generations, keyed by names, so a publish does not reset a
 * route's counts). `take` hands the supervisor what moved since the last call.
 */
export class DataMetrics {
  private readonly routes = new Map<string, RouteMeter>();
  private readonly upstreams = new Map<string, UpstreamMeter>();
  private movedRoutes: RouteMeter[] = [];
  private movedUpstreams: UpstreamMeter[] = [];
  private readonly upstreamMoved = (m: UpstreamMeter) => {
    m.moved = true;
    this.movedUpstreams.push(m);
  };
  /** Requests no route took: 404s, and those refused before routing. */
  readonly unmatched = this.route('', '');

  route(tenant: string, name: string): RouteMeter {
    const key = routeKey(tenant, name);
    let m = this.routes.get(key);
    if (!m) this.routes.set(key, (m = new RouteMeter(tenant, name)));
    return m;
  }

  /** `cluster`: its key in the generation (`tenant/name`). */
  upstream(cluster: string, target: string): UpstreamMeter {
    const key = upstreamKey(cluster, target);
    let m = this.upstreams.get(key);
    if (!m) {
      const { tenant, cluster: name } = clusterNames(cluster);
      this.upstreams.set(key, (m = new UpstreamMeter(tenant, name, target, this.upstreamMoved)));
    }
    return m;
  }

  /**
   * Forgets the meters of routes and targets not in `keys` (servedKeys of the generation now
   * served). A request still running on a replaced generation holds its meter: what it
   * counts is shipped as usual.
   */
  keepOnly(keys: { routes: Set<string>; upstreams: Set<string> }): void {
    for (const k of this.routes.keys()) if (!keys.routes.has(k)) this.routes.delete(k);
    for (const k of this.upstreams.keys()) if (!keys.upstreams.has(k)) this.upstreams.delete(k);
  }

  /** A request ended with `status` after `seconds`. */
  ended(m: RouteMeter, method: string, status: number, seconds: number, bytesReceived: number, bytesSent: number): void {
    m.requests[methodIndex(method) * 5 + classIndex(status)]!++;
    m.duration.observe(seconds);
    m.bytesReceived += bytesReceived;
    m.bytesSent += bytesSent;
    this.moved(m);
  }

  /** A gRPC call ended with the grpc-status its client got (null: none reached it); counted beside `ended`. */
  grpcEnded(m: RouteMeter, status: number | null): void {
    (m.grpc ??= new Array<number>(GRPC_STATUS_LABELS.length).fill(0))[grpcStatusIndex(status)]!++;
    this.moved(m);
  }

  /** The route's oauth-introspection step called its endpoint, or decided a request without it (INTROSPECTION_EVENTS). */
  introspected(m: RouteMeter, event: IntrospectionEvent): void {
    (m.introspection ??= new Array<number>(INTROSPECTION_EVENTS.length).fill(0))[INTROSPECTION_EVENTS.indexOf(event)]!++;
    this.moved(m);
  }

  /** A step of the route refused a request with `status`. */
  rejected(m: RouteMeter, step: string, status: number): void {
    const key = `${step} ${status}`;
    const r = (m.rejections ??= new Map());
    r.set(key, (r.get(key) ?? 0) + 1);
    this.moved(m);
  }

  /** A step of the route failed a request: it threw or rejected, or outlived its budget. */
  stepFailed(m: RouteMeter, step: string, reason: StepFailureReason): void {
    const key = `${step} ${reason}`;
    const f = (m.failures ??= new Map());
    f.set(key, (f.get(key) ?? 0) + 1);
    this.moved(m);
  }

  private moved(m: RouteMeter): void {
    if (m.moved) return;
    m.moved = true;
    this.movedRoutes.push(m);
  }

  /** What moved since the last call (null: nothing), every counter of it back to zero. */
  take(): MetricsDelta | null {
    if (this.movedRoutes.length === 0 && this.movedUpstreams.length === 0) return null;
    const routes = this.movedRoutes.map(takeRoute);
    const upstreams = this.movedUpstreams.map(takeUpstream);
    this.movedRoutes = [];
    this.movedUpstreams = [];
    return { routes, upstreams };
  }
}

/** The counts that moved, as [index, count] pairs. */
function sparse(counts: number[]): [number, number][] {
  const pairs: [number, number][] = [];
  counts.forEach((n, i) => {
    if (n > 0) pairs.push([i, n]);
  });
  return pairs;
}

function takeRoute(m: RouteMeter): RouteDelta {
  const requests = sparse(m.requests);
  m.requests.fill(0);
  const rejections: [string, number, number][] = [];
  for (const [key, n] of m.rejections ?? []) {
    const sp = key.lastIndexOf(' ');
    rejections.push([key.slice(0, sp), Number(key.slice(sp + 1)), n]);
  }
  m.rejections = null;
  const d: RouteDelta = { tenant: m.tenant, route: m.route, requests, duration: m.duration.take(), bytesReceived: m.bytesReceived, bytesSent: m.bytesSent, rejections };
  const grpc = m.grpc === null ? [] : sparse(m.grpc);
  if (grpc.length > 0) {
    d.grpc = grpc;
    m.grpc!.fill(0);
  }
  const introspection = m.introspection === null ? [] : sparse(m.introspection);
  if (introspection.length > 0) {
    d.introspection = introspection;
    m.introspection!.fill(0);
  }
  if (m.failures !== null) {
    d.failures = [];
    for (const [key, n] of m.failures) {
      const sp = key.lastIndexOf(' ');
      d.failures.push([key.slice(0, sp), key.slice(sp + 1) as StepFailureReason, n]);
    }
    m.failures = null;
  }
  m.bytesReceived = 0;
  m.bytesSent = 0;
  m.moved = false;
  return d;
}

function takeUpstream(m: UpstreamMeter): UpstreamDelta {
  const d = { tenant: m.tenant, cluster: m.cluster, target: m.target, duration: m.duration.take(), errors: m.errors };
  m.errors = m.errors.map(() => 0);
  m.moved = false;
  return d;
}
