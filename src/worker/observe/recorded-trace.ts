import type { CallTrace, RequestTrace } from './request-trace.js';
import { CLIENT_LEFT } from '../../steps/step.js';
import { CLIENT, OtlpSpan, serverAttributes } from './otlp-span.js';
import { formatTraceparent, type TraceIds } from './traceparent.js';
import { splitHostPort } from '../../shared/host-port.js';

/**
 * A sampled request's spans: the SERVER span of the gateway request, made by the tracer
 * (tracer.ts), and a CLIENT child span per call out. Each call's traceparent names its
 * own span, so the upstream's span is that call's child. Ended spans go to `exportSpan`.
 * It holds no reference to its request: what outlives the request holds only the spans.
 */
export class RecordedTrace implements RequestTrace {
  readonly recording = true;
  /** The server span's own traceparent, made when first asked: every proxied attempt sends its call's instead. */
  private own: string | null = null;
  /** Calls not ended yet, linked (no array: see otlp-span.ts): closed when the request ends (a client that left mid-call). */
  private open: RecordedCall | null = null;
  private ended = false;

  constructor(
    private readonly span: OtlpSpan,
    readonly fresh: boolean,
    private readonly ids: TraceIds,
    readonly exportSpan: (span: OtlpSpan) => void,
  ) {}

  /** What goes upstream until a call replaces it with its span's traceparent. */
  get replaced(): string {
    return (this.own ??= formatTraceparent(this.span.traceId, this.span.spanId, true));
  }

  get traceId(): string {
    return this.span.traceId;
  }

  call(method: string, server: string): CallTrace {
    const span = new OtlpSpan(this.span.traceId, this.ids.spanId(), this.span.spanId, method, CLIENT, undefined).madeIds(this.ids.lastSpan, null).childOf(this.span);
    span.method = method;
    span.serverAttributes = attributesOf(server);
    const c = new RecordedCall(span, formatTraceparent(span.traceId, span.spanId, true), this);
    c.next = this.open;
    if (this.open !== null) this.open.prev = c;
    this.open = c;
    return c;
  }

  /** A call ended (RecordedCall): no longer open. */
  closed(c: RecordedCall): void {
    if (c.prev !== null) c.prev.next = c.next;
    else if (this.open === c) this.open = c.next;
    if (c.next !== null) c.next.prev = c.prev;
    c.prev = c.next = null;
  }

  end(status: number, requestId: string, grpcStatus: number | null = null): void {
    if (this.ended) return;
    this.ended = true;
    while (this.open !== null) this.open.fail(status === CLIENT_LEFT ? 'client_aborted' : 'abandoned');
    const span = this.span;
    // A request id is one the gateway made or found well formed (WELL_FORMED_REQUEST_ID).
    span.requestId = requestId;
    span.status = status;
    if (status >= 500) {
      span.errorType = String(status);
      span.failed = true;
    }
    if (grpcStatus !== null) {
      span.grpcStatus = grpcStatus;
      // A gRPC call answers HTTP 200 even when it fails: the server-side error codes mark the span.
      if (GRPC_SERVER_ERRORS.has(grpcStatus)) span.failed = true;
    }
    this.exportSpan(span.end());
  }
}

/**
 * The grpc-status codes that make a SERVER span an error (OpenTelemetry's gRPC
 * conventions): UNKNOWN, DEADLINE_EXCEEDED, UNIMPLEMENTED, INTERNAL, UNAVAILABLE, DATA_LOSS.
 * The others are the client's own (NOT_FOUND, PERMISSION_DENIED, …).
 */
const GRPC_SERVER_ERRORS = new Set([2, 4, 12, 13, 14, 15]);

/** One call's CLIENT span, ended once: by its answer, its failure, or the end of its request. */
class RecordedCall implements CallTrace {
  prev: RecordedCall | null = null;
  next: RecordedCall | null = null;
  private ended = false;

  constructor(
    private readonly span: OtlpSpan,
    readonly traceparent: string,
    private readonly owner: RecordedTrace,
  ) {}

  end(status: number): void {
    if (this.ended) return;
    this.span.status = status;
    // A client span's 4xx is an error too (OpenTelemetry HTTP conventions).
    if (status >= 400) {
      this.span.errorType = String(status);
      this.span.failed = true;
    }
    this.close();
  }

  fail(errorType: string): void {
    if (this.ended) return;
    this.span.errorType = errorType;
    this.span.failed = true;
    this.close();
  }

  private close(): void {
    this.ended = true;
    this.owner.exportSpan(this.span.end());
    this.owner.closed(this);
  }
}

/** Call targets' address attributes, parsed and encoded once each (targets and service URLs are few; the map is bounded). */
const addresses = new Map<string, Buffer>();
function attributesOf(server: string): Buffer {
  let a = addresses.get(server);
  if (a === undefined) {
    if (addresses.size >= 1024) addresses.clear();
    const [host, port] = serverAddress(server);
    addresses.set(server, (a = serverAttributes(host, port)));
  }
  return a;
}

/**
 * `server.address` and `server.port` of a call's target: a cluster target as written
 * (`host:port`, `http://…`, `https://…`) or a service URL; the scheme's port when none is written.
 */
export function serverAddress(server: string): [string, number] {
  const scheme = server.indexOf('://');
  const secure = scheme > 0 && server.slice(0, scheme).toLowerCase() === 'https';
  let rest = scheme > 0 ? server.slice(scheme + 3) : server;
  const slash = rest.search(/[/?#]/);
  if (slash >= 0) rest = rest.slice(0, slash);
  const at = rest.lastIndexOf('@');
  if (at >= 0) rest = rest.slice(at + 1);
  const hp = splitHostPort(rest);
  const port = hp?.port ?? 0;
  return [hp?.host ?? rest, port > 0 ? port : secure ? 443 : 80];
}
