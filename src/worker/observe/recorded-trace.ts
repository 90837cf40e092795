import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span, type Tracer } from '@opentelemetry/api';
import type { CallTrace, RequestTrace, TracedRequest } from './request-trace.js';
import { formatTraceparent } from './traceparent.js';

/**
 * A sampled request's spans: the SERVER span of the gateway request, made by the tracer
 * (tracer.ts), and a CLIENT child span per call out. Each call's traceparent names its
 * own span, so the upstream's span is that call's child.
 */
export class RecordedTrace implements RequestTrace {
  readonly recording = true;
  /** The server span's own traceparent: what goes upstream until a call replaces it with its span's. */
  readonly replaced: string;
  private readonly ctx: Context;
  /** Calls not ended yet: closed when the request ends (a client that left mid-call). */
  private open: RecordedCall[] | null = null;
  private ended = false;

  constructor(
    private readonly tracer: Tracer,
    private readonly span: Span,
    readonly traceId: string,
    readonly fresh: boolean,
    private readonly req: TracedRequest,
  ) {
    this.replaced = formatTraceparent(traceId, span.spanContext().spanId, true);
    this.ctx = trace.setSpan(ROOT_CONTEXT, span);
  }

  call(method: string, server: string): CallTrace {
    const [address, port] = serverAddress(server);
    const span = this.tracer.startSpan(method, { kind: SpanKind.CLIENT, attributes: { 'http.request.method': method, 'server.address': address, 'server.port': port } }, this.ctx);
    const c = new RecordedCall(span, formatTraceparent(this.traceId, span.spanContext().spanId, true), this);
    (this.open ??= []).push(c);
    return c;
  }

  /** A call ended (RecordedCall): no longer open. */
  closed(c: RecordedCall): void {
    const open = this.open;
    if (open === null) return;
    const i = open.indexOf(c);
    if (i >= 0) open.splice(i, 1);
  }

  end(status: number): void {
    if (this.ended) return;
    this.ended = true;
    if (this.open !== null) for (const c of this.open.slice()) c.fail(status === 499 ? 'client_aborted' : 'abandoned');
    const span = this.span;
    span.setAttribute('http.response.status_code', status);
    if (this.req.requestId !== '') span.setAttribute('switchyard.request_id', this.req.requestId);
    if (status >= 500) {
      span.setAttribute('error.type', String(status));
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
  }
}

/** One call's CLIENT span, ended once: by its answer, its failure, or the end of its request. */
class RecordedCall implements CallTrace {
  private ended = false;

  constructor(
    private readonly span: Span,
    readonly traceparent: string,
    private readonly owner: RecordedTrace,
  ) {}

  end(status: number): void {
    if (this.ended) return;
    this.span.setAttribute('http.response.status_code', status);
    // A client span's 4xx is an error too (OpenTelemetry HTTP conventions).
    if (status >= 400) {
      this.span.setAttribute('error.type', String(status));
      this.span.setStatus({ code: SpanStatusCode.ERROR });
    }
    this.close();
  }

  fail(errorType: string): void {
    if (this.ended) return;
    this.span.setAttribute('error.type', errorType);
    this.span.setStatus({ code: SpanStatusCode.ERROR });
    this.close();
  }

  private close(): void {
    this.ended = true;
    this.span.end();
    this.owner.closed(this);
  }
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
  const close = rest.lastIndexOf(']');
  const colon = rest.lastIndexOf(':');
  const host = colon > close ? rest.slice(0, colon) : rest;
  const port = colon > close ? Number(rest.slice(colon + 1)) : NaN;
  return [host.startsWith('[') ? host.slice(1, -1) : host, Number.isInteger(port) && port > 0 ? port : secure ? 443 : 80];
}
