import type { Readable } from 'node:stream';
import type { StepReply, StepRun } from '../steps/step.js';
import type { Target } from './data-server.js';
import { envelopeReply } from './envelope.js';
import type { RouteTable } from '../shared/route-table.js';
import { routingHost } from '../shared/route-table.js';
import type { RequestLife } from './request-life.js';
import type { ClusterPools } from './upstream-pools.js';
import { proxyBuffered } from './request-buffer.js';
import { withTraceId } from '../steps/reply.js';

/*
 * The phases of a request, in order (as Pingora's ProxyHttp names its own). A route's
 * terminal (runtime.ts) calls the ones it has, so a phase a route does not use costs nothing.
 * Phases 5-6 live in their own files: the attempt's handlers (forwarding.ts) start them, and
 * this file leads to those handlers (through proxy.ts), so they cannot import it back:
 *
 * 1. match            route table: the route, from method, path and Host alone, before any await
 * 2. requestSteps     the route's steps edit, hold or answer the request before a connection is taken
 * 3. upstreamPeer     the cluster's pools: a step may have chosen another cluster (traffic-split)
 * 4. upstreamRequest  headers built once, the body read ahead or streamed, attempts dispatched (proxy.ts, forwarding.ts)
 * 5. upstreamResponse the answer relayed as it comes, response hooks on its head (upstream-response.ts, relay-handler.ts)
 * 6. responseSteps    collectors (cache, compression) get the whole answer before it is sent (response-steps.ts, collect-handler.ts)
 * 7. log              the done hooks, once, with the final status (RequestLife.exchangeEnded)
 */

/** 1. The route's terminal, or the NoRoute envelope (written from the uWS callback: no life). */
export function match<T>(table: RouteTable<T | Target>, method: string, path: string, host: string, rid: string, traceId: () => string): T | Target {
  return table.lookup(method, routingHost(host), path) ?? envelopeReply('Svc.Data.NoRoute', rid || traceId());
}

/**
 * 2. Runs the route's steps: a step's answer ends the request, else `forward` (phases 3-4)
 * takes it on, at once when every step was synchronous.
 */
export function requestSteps(life: RequestLife, run: StepRun, forward: (life: RequestLife) => void, stepFailed: (err: unknown) => void): void {
  const r = run(life.flow!);
  if (r === undefined) return forward(life);
  if (r instanceof Promise) {
    r.then((o) => (o === undefined ? forward(life) : stepAnswered(life, o))).catch((err) => {
      stepFailed(err);
      life.replyError('Svc.Internal');
    });
    return;
  }
  stepAnswered(life, r);
}

function stepAnswered(life: RequestLife, o: StepReply): void {
  const flow = life.flow!;
  flow.discardBody();
  // A count of the step's decision, with the status it answered: how the request ended
  // (499 if its client left before the refusal was written) is switchyard_requests_total's.
  if (o.served !== true && life.env.metrics !== null && life.ex.meter !== null) life.env.metrics.rejected(life.ex.meter, flow.answeredBy ?? 'group', o.status);
  const head = flow.replyHead(o);
  life.reply(head.status, withTraceId(o, life.traceId()), head.headers);
}

/** 3. The pools the request goes to: the route's cluster, or the one a step chose. */
export function upstreamPeer(life: RequestLife, routePools: ClusterPools, poolsFor: (cluster: string) => ClusterPools): ClusterPools {
  const cluster = life.flow?.cluster ?? null;
  return cluster === null ? routePools : poolsFor(cluster);
}

/** 4. Sends the request upstream; a body up to `bufferBytes` is read whole first (request-buffer.ts). */
export function upstreamRequest(life: RequestLife, pools: ClusterPools, body: Buffer | Readable | null, bufferBytes: number): void {
  proxyBuffered(life, pools, body, bufferBytes);
}
