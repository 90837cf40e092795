import { REQUEST_BUFFERING_DEFAULT_BYTES, type CompiledGeneration, type CompiledRoute, type WebSocketSettings } from '../contracts/generation.js';
import { openWebSocket } from './websocket-upgrade.js';
import type { Logger } from '../shared/logger.js';
import type { StepEnv, UpstreamCall } from '../steps/step.js';
import { refusedBeforeSending } from '../shared/upstream-refusal.js';
import type { StepRegistry } from '../steps/step-registry.js';
import type { Exchange } from './exchange.js';
import { staticReply } from './response-head.js';
import type { Target } from './data-server.js';
import { buildRoutePipeline } from './pipeline.js';
import { RouteTable } from '../shared/route-table.js';
import { ClusterPools, type PoolsContext } from './upstream-pools.js';
import type { WebSocketRouteCounts } from './websocket-route-counts.js';
import { RequestFlow } from './flow.js';
import { GenerationRequests } from './generation-requests.js';
import { match } from './route-match.js';
import { HttpsOnly, httpsRedirect } from './https-only.js';
import type { DataMetrics } from './observe/data-metrics.js';
import type { RouteMeter } from './observe/meters.js';
import type { IntrospectionEvent } from '../contracts/metrics.js';
import type { Tracing } from './observe/request-trace.js';
import type { StepStates } from './step-states.js';
import { StepTimeout } from './step-budget.js';
import type { StepSites } from './step-sites.js';

export interface RuntimeDeps {
  log: Logger;
  traceId: () => string;
  env: StepEnv;
  /** The TLS listener's port (null: none), where a `tls: "required"` route redirects. */
  tlsPort: number | null;
  /** The worker's meters (routes' names and counters); `counting` false: worker.json `metrics.enabled` false. */
  meters: DataMetrics;
  counting: boolean;
  /** The request id's header (null: ids off): an upstream's own copy of it is not relayed. */
  requestIdHeader: string | null;
  /** W3C trace context for every request, and spans with worker.json `tracing`. */
  tracing: Tracing;
  /** What every generation's pools share: the upstream policy, the targets' health, outlier reports. */
  pools: PoolsContext;
  /** Open WebSockets per route, across generations. */
  webSockets: WebSocketRouteCounts;
  /** The steps this worker loaded at init (built-ins and worker.json's packages). */
  steps: StepRegistry;
  /** The steps' per-route state, across generations (the worker drops what a served generation no longer uses). */
  states: StepStates;
  /** Where each route's pipeline records the step it runs, for the stall watchdog (null: no watchdog). */
  stepSites: StepSites | null;
}

/** Everything a worker needs to serve one generation, built once when it arrives. */
export interface Runtime {
  readonly generation: number;
  /** Where a request goes (`tls`: it came over TLS); a handler target belongs to this runtime for the request's whole life. */
  route(method: string, path: string, host: string, tls: boolean, rid: string): Target;
  /** A newer generation replaced this one: close its pools once its requests finish, then call `drained`. */
  retire(drained?: () => void): void;
  /** Requests of cluster routes on this generation not yet ended. */
  requestsInFlight(): number;
  /** Per target of `cluster` (`tenant/name`), requests in flight on this generation's connections ({} before its first request). */
  inFlight(cluster: string): Record<string, number>;
}

/**
 * `atBoot`: the stored generation a worker starts on. It was checked when published, but
 * a step may still fail to build in this process's environment (a jwt-auth `secretEnv`
 * unset since): that route then answers 503 Svc.Data.RouteUnavailable and every other
 * route serves. A publish is strict instead: any failure refuses the generation.
 */
export function buildRuntime(generation: number, gen: CompiledGeneration, deps: RuntimeDeps, atBoot = false): Runtime {
  const { traceId, log, meters } = deps;
  const metrics = deps.counting ? meters : null;
  const pools = new Map<string, ClusterPools>();
  const requests = new GenerationRequests(() => {
    for (const p of pools.values()) void p.close();
    pools.clear();
  });
  const poolsFor = (cluster: string) => {
    let p = pools.get(cluster);
    if (!p) pools.set(cluster, (p = new ClusterPools(gen.clusters[cluster]!, cluster, deps.pools, log, metrics)));
    return p;
  };

  // Steps of this generation reach its own pools (mirror, traffic-split).
  const stepEnv = {
    ...deps.env,
    upstream: (cluster: string) => poolsFor(cluster).pick(),
    // A package step's env.request: counted as the cluster's proxied attempts are.
    upstreamCall: (cluster: string): UpstreamCall => {
      const pools = poolsFor(cluster);
      const target = pools.pick();
      return {
        target,
        answered: (ms, status) => (pools.answered(target, ms, status), pools.outcome(target, status)),
        // Not the target's failure: a request undici refused to send (the step built it) or the step's own time bound.
        failed: (err) => void (refusedBeforeSending(err) || err.name === 'TimeoutError' || err.name === 'AbortError' ? undefined : (pools.failed(target, err), pools.outcome(target, null))),
      };
    },
  };
  // A package step of another build than the one the generation was compiled with throws when a route builds it.
  const steps = deps.steps.forBuilds(gen.stepBuilds);

  const lifeEnv = { traceId, log, metrics, requestIdHeader: deps.requestIdHeader };
  // One route's: a step that throws or rejects answers its request 500 Svc.Data.StepFailed, one past its budget 504 Svc.Data.StepTimeout; the line names route and step.
  const stepFailed = (route: string) => (err: unknown, step: string) => {
    if (err instanceof StepTimeout) log.warn({ route, step, timeoutMs: err.timeoutMs }, 'step timed out: its request was answered 504 Svc.Data.StepTimeout');
    else log.error({ err, route, step }, 'step failed: its request was answered 500 Svc.Data.StepFailed');
  };
  const tracing = deps.tracing;
  // The route's terminal set ex.meter: the trace names the route.
  const begin = (ex: Exchange, flow: RequestFlow | null) => ex.begin(flow, requests, lifeEnv, tracing.start(ex));

  type Built = ReturnType<typeof buildRoutePipeline>;

  /**
   * A route's terminal: the calls to those of its owner's phases (exchange.ts) the route has, as one closure per route, none per request. A WebSocket
   * handshake (Exchange.wantsUpgrade) on a cluster route is proxied when the route has
   * `websocket`, else refused with an envelope.
   */
  function terminal(r: CompiledRoute, meter: RouteMeter): Target {
    const t = r.terminal;
    // Fixed answers are built once here and written without entering the pipeline.
    if (t.type === 'directResponse') return { ...staticReply(t.statusCode, t.body, withoutIdHeader(t.headers, deps.requestIdHeader)), meter };
    if (t.type === 'redirect') return { ...staticReply(t.statusCode, '', { location: t.location, 'content-type': 'text/plain; charset=utf-8' }), meter };
    const upstream = poolsFor(t.cluster);
    let built: Built;
    try {
      // Counters are a closure per route, made once here, and none when metrics are off.
      const counters = metrics === null ? undefined : { introspection: (e: IntrospectionEvent) => metrics.introspected(meter, e) };
      built = buildRoutePipeline(t.steps, { env: stepEnv, registry: steps, states: deps.states, sites: deps.stepSites?.forRoute(r.tenant, r.name), route: r.name, counters });
    } catch (err) {
      if (!atBoot) throw err;
      log.error({ err, generation, tenant: r.tenant, route: r.name }, 'route cannot be loaded: it answers 503 until a publish fixes it');
      return (ex) => {
        ex.meter = meter;
        begin(ex, null).replyError('Svc.Data.RouteUnavailable');
      };
    }
    // Bodies up to this size are read whole before a connection is taken (request-buffer.ts).
    const bufferBytes = t.bufferBytes ?? REQUEST_BUFFERING_DEFAULT_BYTES; // absent in a generation stored before it existed
    const http = httpTerminal(r.id, upstream, built, bufferBytes);
    const ws = t.websocket ? websocketTerminal(r.id, upstream, built, t.websocket) : null;
    // A `grpc` route's calls live by their deadline; a `{web: true}` one speaks gRPC upstream for a browser's gRPC-Web call (grpc/).
    const grpc = t.grpc !== undefined;
    const web = t.grpc?.web === true;
    return (ex) => {
      ex.meter = meter;
      if (grpc && ex.grpc !== null) {
        ex.grpc.routed = true;
        if (web && ex.grpc.web !== null) ex.grpc.translateWeb(ex.header('accept'));
      }
      if (!ex.wantsUpgrade) http(ex);
      else if (ws === null) begin(ex, null).replyError('Svc.Data.UpgradeRefused');
      else ws(ex);
    };
  }

  function httpTerminal(routeId: string, upstream: ClusterPools, built: Built, bufferBytes: number): (ex: Exchange) => void {
    if (built === null) {
      // No steps: no flow, the route's own pools.
      return (ex) => begin(ex, null).upstreamRequest(upstream, ex.hasBody ? ex.bodyStream() : null, bufferBytes);
    }
    const { run: pipeline, owned } = built;
    const failed = stepFailed(routeId);
    const forward = (ex: Exchange) => ex.upstreamRequest(ex.upstreamPeer(upstream, poolsFor), ex.flow!.upstreamBody(), bufferBytes);
    return (ex) => {
      // The body stream is attached now: uWS drops body data that has no reader.
      begin(ex, new RequestFlow(ex, ex.hasBody ? ex.bodyStream() : null, owned)).requestSteps(pipeline, forward, failed);
    };
  }

  /** A WebSocket route's handshake: the same steps, then the upstream's handshake (websocket-upgrade.ts). */
  function websocketTerminal(routeId: string, upstream: ClusterPools, built: Built, settings: WebSocketSettings): (ex: Exchange) => void {
    const connect = (ex: Exchange) => openWebSocket(ex, ex.upstreamPeer(upstream, poolsFor), settings, routeId, deps.webSockets);
    if (built === null) return (ex) => connect(begin(ex, null));
    const failed = stepFailed(routeId);
    return (ex) => begin(ex, new RequestFlow(ex, null, built.owned)).requestSteps(built.run, connect, failed);
  }

  const redirect = httpsRedirect(deps.tlsPort);
  const table = new RouteTable<Target | HttpsOnly>(gen, (r) => {
    const meter = meters.route(r.tenant, r.name);
    const t = terminal(r, meter);
    if (r.tls !== 'required') return t;
    return new HttpsOnly(t, (ex) => {
      ex.meter = meter;
      redirect(ex);
    });
  });

  return {
    generation,
    // Only a generation with a `tls: "required"` route looks at the scheme per request.
    route: Object.values(gen.tenants).some((t) => t.routes.some((r) => r.tls === 'required'))
      ? (method, path, host, tls, rid) => {
          const t = match(table, method, path, host, rid, traceId);
          return t instanceof HttpsOnly ? (tls ? t.target : t.redirect) : t;
        }
      : (method, path, host, _tls, rid) => match(table, method, path, host, rid, traceId) as Target,
    retire: (drained) => requests.retire(drained),
    requestsInFlight: () => requests.inFlight,
    inFlight: (cluster) => pools.get(cluster)?.inFlight() ?? {},
  };
}

/** A fixed answer's configured headers without the request id's: the data server appends the request's own. */
function withoutIdHeader(headers: Record<string, string>, idHeader: string | null): Record<string, string> {
  if (idHeader === null || !Object.keys(headers).some((k) => k.toLowerCase() === idHeader)) return headers;
  return Object.fromEntries(Object.entries(headers).filter(([k]) => k.toLowerCase() !== idHeader));
}
