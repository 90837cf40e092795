import type { CallTrace } from '../../steps/step.js';
import type { RouteMeter } from './meters.js';
import type { GrpcCall } from '../grpc/grpc-call.js';
import { TraceIds, validTraceparent } from './traceparent.js';

export type { CallTrace };

/** What the tracer reads of a request (an Exchange is one). */
export interface TracedRequest {
  readonly method: string;
  readonly path: string;
  readonly scheme: 'http' | 'https';
  readonly clientAddress: string;
  /** The route that took the request (its meter, which keeps the route's span parts); null: none. */
  readonly meter: Pick<RouteMeter, 'tenant' | 'route' | 'spans'> | null;
  /** A gRPC call (its span gets the rpc.* attributes); null for any other request. */
  readonly grpc: GrpcCall | null;
  header(name: string): string | undefined;
}

/** How the trace context goes upstream (upstream-request-headers.ts). */
export interface UpstreamTrace {
  /** The `traceparent` sent in place of the client's; null: the client's goes on as it came. */
  readonly replaced: string | null;
  /** A new trace: the client's `tracestate`, if any, belongs to no trace being continued and is dropped. */
  readonly fresh: boolean;
}

/** One request's place in a W3C trace, from its arrival to its end (owned by its Exchange, exchange.ts). */
export interface RequestTrace extends UpstreamTrace {
  /** 32 hex digits: the trace continued or started. */
  readonly traceId: string;
  /** Spans are recorded and exported: every call out gets its own span, hence its own traceparent. */
  readonly recording: boolean;
  /**
   * A call out of the gateway (an upstream attempt, a WebSocket handshake, a step's
   * service call): the traceparent to send with it. `server` is `host:port` or a URL.
   */
  call(method: string, server: string): CallTrace;
  /**
   * The request ended with its final status (final-status.ts) and its id ('' without ids: a
   * request-id step may have kept the client's, so it is known only now); a gRPC call's
   * grpc-status as its client got it (GrpcCall.statusAtEnd; null or absent: none).
   */
  end(status: number, requestId: string, grpcStatus?: number | null): void;
}

/** Makes the trace of each request, once per worker (tracer.ts builds the recording one). */
export interface Tracing {
  start(req: TracedRequest): RequestTrace;
  /** Sends what is still queued, within `timeoutMs` at most. */
  flush(timeoutMs: number): Promise<void>;
}

/**
 * A trace that is passed on without spans (tracing off, or a request not sampled): the
 * client's valid traceparent goes upstream unchanged, else a new one. Its calls carry
 * the same traceparent, so it is its own CallTrace: nothing is allocated per call.
 */
export class PropagatedTrace implements RequestTrace, CallTrace {
  readonly recording = false;
  readonly fresh: boolean;
  readonly replaced: string | null;

  /** `replaced`: false when `traceparent` is the client's own, valid one. */
  constructor(
    readonly traceparent: string,
    replaced: boolean,
  ) {
    this.replaced = replaced ? traceparent : null;
    this.fresh = replaced;
  }

  get traceId(): string {
    return this.traceparent.slice(3, 35);
  }

  call(): CallTrace {
    return this;
  }

  end(): void {}

  fail(): void {}
}

/** Tracing off: W3C propagation only, never an SDK call. */
export class PropagationOnly implements Tracing {
  private readonly ids = new TraceIds();

  start(req: TracedRequest): RequestTrace {
    const incoming = req.header('traceparent');
    return incoming !== undefined && validTraceparent(incoming) ? new PropagatedTrace(incoming, false) : new PropagatedTrace(this.ids.newTraceparent(), true);
  }

  flush(): Promise<void> {
    return Promise.resolve();
  }
}
