import { StepHookError } from './step-hook-error.js';
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { ERRORS, type ErrorCode } from '../shared/errors.js';
import type { CollectedAnswer, StepReply, StepRun } from '../steps/step.js';
import { withTraceId } from '../steps/reply.js';
import { envelopeReply } from './envelope.js';
import { ExchangeGrpc } from './exchange-grpc.js';
import type { RequestFlow } from './flow.js';
import type { GenerationRequests } from './generation-requests.js';
import type { RequestTrace } from './observe/request-trace.js';
import type { LifeEnv, RequestOwner } from './request-owner.js';
import type { ClusterPools } from './upstream-pools.js';
import { proxyBuffered } from './request-buffer.js';
import { RelayHandler } from './relay-handler.js';
import { CollectHandler } from './collect-handler.js';
import { GrpcWebResponse } from './grpc/grpc-web-response.js';
import { StepTimeout } from './step-budget.js';

/**
 * The one owner of a request, from the data server's callback to its completion: its
 * downstream half (the request copied, the answer written, the final status decided once:
 * exchange-end.ts and the classes it extends) and its phases, as its methods (named as
 * Pingora's ProxyHttp names its own). A route's terminal (runtime.ts) calls the phases its
 * route has, so a phase a route does not use costs nothing:
 *
 * 1. match            the route table's lookup (route-match.ts), in the data server's callback
 *                     before this object is made: a fixed reply and the NoRoute envelope need
 *                     none (docs/architecture.md, "One owner per request")
 * 2. requestSteps     the route's steps edit, hold or answer the request before a connection is taken
 * 3. upstreamPeer     the cluster's pools: a step may have chosen another (traffic-split)
 * 4. upstreamRequest  body read ahead or streamed, attempts dispatched (request-buffer.ts, proxy.ts, forwarding.ts)
 * 5. upstreamResponse each attempt's answer handler, relayed as it comes (relay-handler.ts)
 * 6. responseSteps    collectors (cache, compression) over the whole answer (collect-handler.ts calls it)
 * 7. log              exchangeEnded(): the final status is decided, the done hooks run;
 *                     finish(): the work ended, the generation's count; the trace ends after both
 *
 * The code it hands the request to sees it as a RequestOwner (request-owner.ts).
 */
export class Exchange extends ExchangeGrpc implements RequestOwner {
  /** The steps' view of the request; null on routes without steps. */
  flow: RequestFlow | null = null;
  /** Nothing of ours runs for this request any more; set once, by finish(). */
  finished = false;
  /** The generation that counts this request while its work runs; null until begin(). */
  private requests: GenerationRequests | null = null;
  private lifeEnv: LifeEnv | null = null;

  /** What every request of the generation shares; set by begin(). */
  get env(): LifeEnv {
    return this.lifeEnv!;
  }

  /** A cluster route's terminal takes the request: its generation counts it until finish(). */
  begin(flow: RequestFlow | null, requests: GenerationRequests, env: LifeEnv, trace: RequestTrace | null): this {
    requests.started();
    this.requests = requests;
    this.lifeEnv = env;
    this.flow = flow;
    this.trace = trace;
    if (flow !== null) flow.trace = trace;
    // A gRPC call's grpc-timeout is its deadline from here (grpc/grpc-call.ts).
    if (this.grpc !== null) this.startDeadline();
    return this;
  }

  /** 2. Runs the route's steps: a step's answer ends the request, else `forward` (phases 3-4) takes it on, at once when every step was synchronous. */
  requestSteps(run: StepRun, forward: (ex: Exchange) => void, stepFailed: (err: unknown, step: string) => void): void {
    this.stepFailedLog = stepFailed;
    const failed = (err: unknown): void => {
      const timedOut = err instanceof StepTimeout;
      this.stepFailure(err);
      this.replyError(timedOut ? 'Svc.Data.StepTimeout' : 'Svc.Data.StepFailed');
    };
    let r: ReturnType<StepRun>;
    try {
      r = run(this.flow!);
    } catch (err) {
      return failed(err); // a step that throws before it awaits: answered and finished as one that rejects
    }
    if (r === undefined) return forward(this);
    if (r instanceof Promise) {
      r.then((o) => (o === undefined ? forward(this) : this.stepAnswered(o))).catch(failed);
      return;
    }
    try {
      this.stepAnswered(r); // its response hooks run here: one that throws is the step's failure too
    } catch (err) {
      failed(err);
    }
  }

  /** The route's log of a failed step (requestSteps): what a hook's failure later reports to as well. */
  private stepFailedLog: ((err: unknown, step: string) => void) | null = null;

  /**
   * A step failed (threw, rejected, passed its budget, or a response hook of it threw): logged
   * and counted under its code. A budget and a hook name their step; otherwise the pipeline named
   * each step on the flow before running it: the one that failed (a group's member: 'group').
   */
  private stepFailure(err: unknown): void {
    const timedOut = err instanceof StepTimeout;
    const step = timedOut || err instanceof StepHookError ? err.step : (this.flow!.answeredBy ?? 'group');
    this.stepFailedLog?.(err, step);
    if (this.env.metrics !== null && this.meter !== null) this.env.metrics.stepFailed(this.meter, step, timedOut ? 'timeout' : 'threw');
  }

  /** A step's response hook threw on the upstream's head (relay-handler.ts): its failure; the answer is the relay's StepFailed. */
  stepHookFailed(err: StepHookError): void {
    this.stepFailure(err);
  }

  private stepAnswered(o: StepReply): void {
    const flow = this.flow!;
    flow.discardBody();
    // A count of the step's decision, with the status it answered: how the request ended
    // (499 if its client left before the refusal was written) is switchyard_requests_total's.
    if (o.served !== true && this.env.metrics !== null && this.meter !== null) this.env.metrics.rejected(this.meter, flow.answeredBy ?? 'group', o.status);
    // A gRPC client reads a refusal as a grpc-status; what a step serves (a cache hit, echo) goes out as it is.
    if (this.grpc !== null && o.served !== true && o.status >= 400) return this.replyGrpc(o.status, o.code ?? null, this.traceId());
    const head = flow.replyHead(o);
    this.reply(head.status, withTraceId(o, this.traceId()), head.headers);
  }

  /** 3. The pools the request goes to: the route's cluster, or the one a step chose. */
  upstreamPeer(routePools: ClusterPools, poolsFor: (cluster: string) => ClusterPools): ClusterPools {
    const cluster = this.flow?.cluster ?? null;
    return cluster === null ? routePools : poolsFor(cluster);
  }

  /** 4. Sends the request upstream; a body up to `bufferBytes` is read whole first (request-buffer.ts). */
  upstreamRequest(pools: ClusterPools, body: Buffer | Readable | null, bufferBytes: number): void {
    proxyBuffered(this, pools, body, bufferBytes);
  }

  /** 5. The handler an attempt's answer goes to: relayed, or gathered first for the collectors (phase 6). */
  upstreamResponse(): Dispatcher.DispatchHandler {
    const relay = new RelayHandler(this);
    const answer = this.flow?.collectors ? new CollectHandler(this, relay) : relay;
    // A translated gRPC-Web call: the upstream's gRPC answer becomes gRPC-Web (grpc/grpc-web-response.ts).
    return this.grpc?.translate ? new GrpcWebResponse(answer, this.grpc.responseMode, this.grpc) : answer;
  }

  /** 6. The collectors, then the response hooks, over a whole answer; it goes out in one piece. */
  responseSteps(answer: CollectedAnswer): void {
    const flow = this.flow!;
    const a = flow.collected(answer);
    const head = { status: a.status, headers: a.headers };
    try {
      flow.applyResponseHooks(head);
    } catch (err) {
      if (!(err instanceof StepHookError)) throw err;
      this.stepFailure(err);
      return this.replyError('Svc.Data.StepFailed');
    }
    this.reply(head.status, a.body, head.headers);
  }

  /**
   * 7. The exchange settled with its final status (answered, cut, or the client left): the
   * done hooks run now, also while a step still works for a client that left (a
   * concurrency slot, a breaker's count must not wait for a slow step).
   */
  protected override exchangeEnded(): void {
    this.grpc?.stop();
    this.flow?.ended(this.finalStatus);
    if (this.finished) this.endTrace();
  }

  /** 7. The request's work ended (answered, failed, or given up on a client that left): the generation's count. Idempotent. */
  finish(): void {
    if (this.finished) return;
    this.finished = true;
    if (this.ended) this.endTrace();
    this.requests?.ended();
  }

  /** After its calls out ended (the upstream's answer completes before its last bytes reach the client). */
  private endTrace(): void {
    const trace = this.trace;
    if (trace !== null) trace.end(this.finalStatus, this.requestId, this.grpc === null ? null : this.grpc.statusAtEnd(this.finalStatus));
  }

  /** The id an error envelope carries: the request's id, or a trace id made for it. */
  traceId(): string {
    return this.requestId || this.env.traceId();
  }

  /** Answers with the error envelope (unless the client left or was answered), then finishes. */
  replyError(code: ErrorCode, traceId?: string): void {
    if (this.grpc !== null) return this.replyGrpc(ERRORS[code].status, code, traceId ?? this.traceId());
    if (this.answerable) this.sendStatic(envelopeReply(code, traceId ?? this.traceId()));
    this.finish();
  }

  /** Answers with a whole response (a step's reply, a collected answer), then finishes. */
  reply(status: number, body: string | Buffer, headers: [string, string][]): void {
    this.sendHead(status, body, headers);
    this.finish();
  }
}
