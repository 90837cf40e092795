import { REQUEST_BUFFERING_DEFAULT_BYTES, type CompiledGeneration, type CompiledRoute } from '../contracts/generation.js';
import type { Logger } from '../shared/logger.js';
import type { StepEnv, StepReply } from '../steps/step.js';
import { errorEnvelope } from '../shared/errors.js';
import type { Exchange } from './exchange.js';
import { staticReply } from './response-head.js';
import type { Target } from './data-server.js';
import { envelopeReply } from './envelope.js';
import { buildRoutePipeline } from './pipeline.js';
import { proxy } from './proxy.js';
import { proxyBuffered } from './request-buffer.js';
import { RouteTable, routingHost } from './route-table.js';
import { ClusterPools } from './upstream-pools.js';
import { RequestFlow } from './flow.js';

export interface RuntimeDeps {
  log: Logger;
  traceId: () => string;
  env: StepEnv;
}

/** Everything a worker needs to serve one generation, built once when it arrives. */
export interface Runtime {
  readonly generation: number;
  /** Where a request goes; a handler target belongs to this runtime for the request's whole life. */
  route(method: string, path: string, host: string): Target;
  /** A newer generation replaced this one: close its pools once its requests finish. */
  retire(): void;
}


/**
 * `atBoot`: the stored generation a worker starts on. It was checked when published, but
 * a step may still fail to build in this process's environment (a jwt-auth `secretEnv`
 * unset since): that route then answers 503 Svc.Data.RouteUnavailable and every other
 * route serves. A publish is strict instead: any failure refuses the generation.
 */
export function buildRuntime(generation: number, payload: unknown, deps: RuntimeDeps, atBoot = false): Runtime {
  const gen = payload as CompiledGeneration;
  const { traceId, log } = deps;
  const pools = new Map<string, ClusterPools>();
  let inFlight = 0;
  let retired = false;
  const closePools = () => {
    for (const p of pools.values()) void p.close();
    pools.clear();
  };
  const done = () => {
    if (--inFlight === 0 && retired) closePools();
  };
  const poolsFor = (cluster: string) => {
    let p = pools.get(cluster);
    if (!p) pools.set(cluster, (p = new ClusterPools(gen.clusters[cluster]!, cluster.slice(0, cluster.indexOf('/')))));
    return p;
  };

  // Steps of this generation reach its own pools (mirror, traffic-split).
  const stepEnv = { ...deps.env, upstream: (cluster: string) => poolsFor(cluster).pick() };

  const proxyEnv = { traceId, log };
  const fail = (ex: Exchange, err: unknown) => {
    log.error({ err }, 'step failed');
    ex.sendJson(500, errorEnvelope('Svc.Internal', traceId()));
    done();
  };

  function terminal(r: CompiledRoute): Target {
    const t = r.terminal;
    // Fixed answers are built once here and written without entering the pipeline.
    if (t.type === 'directResponse') return staticReply(t.statusCode, t.body, t.headers);
    if (t.type === 'redirect') return staticReply(t.statusCode, '', { location: t.location, 'content-type': 'text/plain; charset=utf-8' });
    const upstream = poolsFor(t.cluster);
    let built: ReturnType<typeof buildRoutePipeline>;
    try {
      built = buildRoutePipeline(t.steps, stepEnv);
    } catch (err) {
      if (!atBoot) throw err;
      log.error({ err, generation, tenant: r.tenant, route: r.name }, 'route cannot be loaded: it answers 503 until a publish fixes it');
      return (ex) => ex.sendStatic(envelopeReply('Svc.Data.RouteUnavailable', traceId()));
    }
    // Bodies up to this size are read whole before a connection is taken (request-buffer.ts).
    const bufferBytes = t.bufferBytes ?? REQUEST_BUFFERING_DEFAULT_BYTES; // absent in a generation stored before it existed
    if (built === null) {
      if (bufferBytes === 0) {
        return (ex) => {
          inFlight++;
          proxy(ex, upstream, ex.hasBody ? ex.bodyStream() : null, null, proxyEnv, done);
        };
      }
      return (ex) => {
        inFlight++;
        if (!ex.hasBody) return proxy(ex, upstream, null, null, proxyEnv, done);
        proxyBuffered(ex, upstream, ex.bodyStream(), null, proxyEnv, done, bufferBytes);
      };
    }
    const { run: pipeline, owned } = built;
    // Per route, not per request: a request through steps makes no closures of its own.
    const forward = (ex: Exchange, flow: RequestFlow) =>
      proxyBuffered(ex, flow.cluster === null ? upstream : poolsFor(flow.cluster), flow.upstreamBody(), flow, proxyEnv, done, bufferBytes);
    const replied = (ex: Exchange, flow: RequestFlow, o: StepReply) => {
      flow.discardBody();
      const head = flow.replyHead(o);
      ex.sendHead(head.status, o.body, head.headers);
      flow.finish(ex.aborted);
      done();
    };
    return (ex) => {
      inFlight++;
      const flow = new RequestFlow(ex, ex.hasBody ? ex.bodyStream() : null, owned); // attach now: uWS drops body data that has no reader
      const r = pipeline(flow);
      if (r === undefined) return forward(ex, flow);
      if (r instanceof Promise) {
        // A client gone while a step waits ends the flow now: its done hooks (a
        // concurrency slot, a breaker's count) must not wait for the slow step.
        ex.onAbort(() => flow.finish(true));
        r.then((o) => (o === undefined ? forward(ex, flow) : replied(ex, flow, o))).catch((err) => {
          flow.status = 500;
          fail(ex, err);
          flow.finish(ex.aborted);
        });
        return;
      }
      replied(ex, flow, r);
    };
  }

  const table = new RouteTable<Target>(gen, terminal);

  return {
    generation,
    route(method, path, host) {
      return table.lookup(method, routingHost(host), path) ?? envelopeReply('Svc.Data.NoRoute', traceId());
    },
    retire() {
      retired = true;
      if (inFlight === 0) closePools();
    },
  };
}
