import type { CallTrace, RequestTrace, TracedRequest } from './request-trace.js';
import { CLIENT, OtlpSpan } from './otlp-span.js';
import { formatTraceparent, type TraceIds } from './traceparent.js';

/**
 * A sampled request's spans: the SERVER span of the gateway request, made by the tracer
 * (tracer.ts), and a CLIENT child span per call out. Each call's traceparent names its
 * own span, so the upstream's span is that call's child. Ended spans go to `exportSpan`.
 */
export class RecordedTrace implements RequestTrace {
  readonly recording = true;
  /** The server span's own traceparent: what goes upstream until a call replaces it with its span's. */
  readonly replaced: string;
  /** Calls not ended yet: closed when the request ends (a client that left mid-call). */
  private open: RecordedCall[] | null = null;
  private ended = false;

  constructor(
    private readonly span: OtlpSpan,
    readonly fresh: boolean,
    private readonly req: TracedRequest,
    private readonly ids: TraceIds,
    readonly exportSpan: (span: string) => void,
  ) {
    this.replaced = formatTraceparent(span.traceId, span.spanId, true);
  }

  get traceId(): string {
    return this.span.traceId;
  }

  call(method: string, server: string): CallTrace {
    const [address, port] = addressOf(server);
    // The method is the request's (a checked token) or a step's; the address is parsed from configuration.
    const span = new OtlpSpan(this.span.traceId, this.ids.spanId(), this.span.spanId, method, CLIENT, undefined)
      .str('http.request.method', method)
      .str('server.address', address)
      .int('server.port', port);
    const c = new RecordedCall(span, formatTraceparent(span.traceId, span.spanId, true), this);
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
    // A request id is one the gateway made or found well formed (WELL_FORMED_REQUEST_ID).
    if (this.req.requestId !== '') span.safe('switchyard.request_id', this.req.requestId);
    span.int('http.response.status_code', status);
    if (status >= 500) span.safe('error.type', String(status)).failed();
    this.exportSpan(span.end());
  }
}

/** One call's CLIENT span, ended once: by its answer, its failure, or the end of its request. */
class RecordedCall implements CallTrace {
  private ended = false;

  constructor(
    private readonly span: OtlpSpan,
    readonly traceparent: string,
    private readonly owner: RecordedTrace,
  ) {}

  end(status: number): void {
    if (this.ended) return;
    this.span.int('http.response.status_code', status);
    // A client span's 4xx is an error too (OpenTelemetry HTTP conventions).
    if (status >= 400) this.span.safe('error.type', String(status)).failed();
    this.close();
  }

  fail(errorType: string): void {
    if (this.ended) return;
    this.span.str('error.type', errorType).failed();
    this.close();
  }

  private close(): void {
    this.ended = true;
    this.owner.exportSpan(this.span.end());
    this.owner.closed(this);
  }
}

/** Call targets' addresses, parsed once each (targets and service URLs are few; the map is bounded). */
const addresses = new Map<string, [string, number]>();
function addressOf(server: string): [string, number] {
  let a = addresses.get(server);
  if (a === undefined) {
    if (addresses.size >= 1024) addresses.clear();
    addresses.set(server, (a = serverAddress(server)));
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
  const close = rest.lastIndexOf(']');
  const colon = rest.lastIndexOf(':');
  const host = colon > close ? rest.slice(0, colon) : rest;
  const port = colon > close ? Number(rest.slice(colon + 1)) : NaN;
  return [host.startsWith('[') ? host.slice(1, -1) : host, Number.isInteger(port) && port > 0 ? port : secure ? 443 : 80];
}
