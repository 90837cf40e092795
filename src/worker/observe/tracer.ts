import type { ObserveSettings } from '../../contracts/ipc.js';
import { PropagatedTrace, PropagationOnly, type RequestTrace, type TracedRequest, type Tracing } from './request-trace.js';
import { RecordedTrace, serverAddress } from './recorded-trace.js';
import { formatTraceparent, parseTraceparent, TraceIds } from './traceparent.js';
import { throttledWarn } from './export-warnings.js';
import { OtlpSpan, SERVER, serverAttributes } from './otlp-span.js';
import { RouteSpans } from './route-spans.js';
import { OtlpExporter } from './otlp-exporter.js';
import { GrpcCall } from '../grpc/grpc-call.js';

export type TracingSettings = NonNullable<ObserveSettings['tracing']>;

/** The tracing of a worker: propagation only without `tracing` in worker.json, spans over OTLP/HTTP with it. */
export function tracingFor(settings: TracingSettings | null, log: { warn(obj: object, msg: string): void }, env: NodeJS.ProcessEnv = process.env): Tracing {
  return settings === null ? new PropagationOnly() : new OtlpTracing(settings, log, env);
}

/** Whether a new trace is recorded: the same answer for the same trace id on every node (as OpenTelemetry's TraceIdRatioBased). */
export function sampledByRatio(traceId: string, ratio: number): boolean {
  if (ratio >= 1) return true;
  if (ratio <= 0) return false;
  return parseInt(traceId.slice(16, 24), 16) < ratio * 0x1_0000_0000;
}

/**
 * Spans as OTLP protobuf over OTLP/HTTP: parent-based sampling (an incoming sampled flag is
 * followed; a new trace is sampled by `sampleRatio` on its trace id), decided before a
 * span is made, so a request that is not sampled costs what it costs with tracing off.
 */
class OtlpTracing implements Tracing {
  private readonly ids = new TraceIds();
  private readonly exporter: OtlpExporter;
  private readonly exportSpan: (span: OtlpSpan) => void;
  /** The last Host's address attributes: most requests repeat it. */
  private lastHost = '';
  private lastHostAttributes: Buffer | null = null;

  constructor(
    private readonly settings: TracingSettings,
    log: { warn(obj: object, msg: string): void },
    env: NodeJS.ProcessEnv,
  ) {
    const headers: Record<string, string> = {};
    for (const [name, variable] of Object.entries(settings.headersEnv)) {
      const value = env[variable];
      if (value !== undefined) headers[name] = value;
    }
    this.exporter = new OtlpExporter(settings.endpoint, settings.serviceName, headers, throttledWarn(log));
    this.exportSpan = (span) => this.exporter.add(span);
  }

  start(req: TracedRequest): RequestTrace {
    const incoming = req.header('traceparent');
    const parent = parseTraceparent(incoming);
    if (parent !== null && !parent.sampled) return new PropagatedTrace(incoming!, false);
    let traceId: string;
    if (parent === null) {
      traceId = this.ids.traceId();
      if (!sampledByRatio(traceId, this.settings.sampleRatio)) return new PropagatedTrace(formatTraceparent(traceId, this.ids.spanId(), false), true);
    } else traceId = parent.traceId;
    const meter = req.meter;
    const method = req.method;
    let name: string;
    let attributes: Buffer | null = null;
    if (meter === null) name = `HTTP ${method}`;
    else {
      const r = (meter.spans ??= new RouteSpans(meter.route, meter.tenant));
      name = r.name(method);
      attributes = r.attributes;
    }
    const state = parent === null ? undefined : req.header('tracestate');
    const span = new OtlpSpan(traceId, this.ids.spanId(), parent === null ? '' : parent.spanId, name, SERVER, state).madeIds(
      this.ids.lastSpan,
      parent === null ? this.ids.lastTrace : null,
    );
    span.method = method;
    span.path = req.path;
    span.scheme = req.scheme;
    span.client = req.clientAddress;
    span.routeAttributes = attributes;
    const host = req.header('host');
    if (host !== undefined) span.serverAttributes = this.hostAttributes(req.scheme, host);
    if (req.grpc !== null) {
      // OpenTelemetry's gRPC conventions, beside the HTTP ones: the service and method from the path.
      const m = GrpcCall.methodOf(req.path);
      span.rpc = true;
      if (m !== null) {
        span.rpcService = m.service;
        span.rpcMethod = m.method;
      }
    }
    return new RecordedTrace(span, parent === null, this.ids, this.exportSpan);
  }

  private hostAttributes(scheme: string, host: string): Buffer {
    const key = scheme === 'https' ? `s${host}` : host;
    if (key !== this.lastHost || this.lastHostAttributes === null) {
      const [address, port] = serverAddress(`${scheme}://${host}`);
      this.lastHost = key;
      this.lastHostAttributes = serverAttributes(address, port);
    }
    return this.lastHostAttributes;
  }

  flush(timeoutMs: number): Promise<void> {
    return this.exporter.flush(timeoutMs);
  }
}
