import { createTraceState, diag, DiagLogLevel, ROOT_CONTEXT, SpanKind, trace, TraceFlags, type Attributes, type Tracer } from '@opentelemetry/api';
import { setGlobalErrorHandler } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, SamplingDecision, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-base';
import type { ObserveSettings } from '../../contracts/ipc.js';
import { PropagatedTrace, PropagationOnly, type RequestTrace, type TracedRequest, type Tracing } from './request-trace.js';
import { RecordedTrace, serverAddress } from './recorded-trace.js';
import { formatTraceparent, parseTraceparent, TraceIds } from './traceparent.js';
import { throttledWarn, WarningExporter } from './export-warnings.js';

export type TracingSettings = NonNullable<ObserveSettings['tracing']>;

/** What the exporter may hold and spend: a collector that is down or hangs costs dropped spans, never requests. */
const EXPORT = {
  /** Spans waiting for export; past this, new ones are dropped. */
  maxQueueSize: 2048,
  maxExportBatchSize: 512,
  scheduledDelayMillis: 1_000,
  /** One export (its retries included) gives up after this. */
  timeoutMillis: 5_000,
  /** Exports in flight at once (a hanging collector holds each until its timeout). */
  concurrencyLimit: 2,
};

/** The tracing of a worker: propagation only without `tracing` in worker.json, spans over OTLP/HTTP with it. */
export function tracingFor(settings: TracingSettings | null, log: { warn(obj: object, msg: string): void }, env: NodeJS.ProcessEnv = process.env): Tracing {
  return settings === null ? new PropagationOnly() : new OtelTracing(settings, log, env);
}

/**
 * Spans through the OpenTelemetry SDK: parent-based sampling (an incoming sampled flag is
 * followed; a new trace is sampled by `sampleRatio` on its trace id), a batch processor
 * and the OTLP/HTTP (JSON) exporter. The decision is made before any SDK call, so a
 * request that is not sampled costs what it costs with tracing off.
 */
class OtelTracing implements Tracing {
  private readonly ids = new TraceIds();
  private readonly provider: BasicTracerProvider;
  private readonly tracer: Tracer;
  private readonly root: TraceIdRatioBasedSampler;
  /** The trace id the SDK gives the next root span: the one sampling was decided on. */
  private nextTraceId: string | null = null;

  constructor(settings: TracingSettings, log: { warn(obj: object, msg: string): void }, env: NodeJS.ProcessEnv) {
    const warn = throttledWarn(log);
    // The SDK reports through these globals; in a worker they are ours alone.
    diag.setLogger({ error: warn, warn, info: noop, debug: noop, verbose: noop }, DiagLogLevel.WARN);
    setGlobalErrorHandler((err) => warn(String((err as Error | undefined)?.message ?? err)));
    const headers: Record<string, string> = {};
    for (const [name, variable] of Object.entries(settings.headersEnv)) {
      const value = env[variable];
      if (value !== undefined) headers[name] = value;
    }
    const exporter = new OTLPTraceExporter({ url: settings.endpoint, headers, timeoutMillis: EXPORT.timeoutMillis, concurrencyLimit: EXPORT.concurrencyLimit });
    this.root = new TraceIdRatioBasedSampler(settings.sampleRatio);
    const ids = this.ids;
    this.provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': settings.serviceName }),
      sampler: new ParentBasedSampler({ root: this.root }),
      idGenerator: {
        generateTraceId: () => this.nextTraceId ?? ids.traceId(),
        generateSpanId: () => ids.spanId(),
      },
      spanProcessors: [
        new BatchSpanProcessor(new WarningExporter(exporter, warn), {
          maxQueueSize: EXPORT.maxQueueSize,
          maxExportBatchSize: EXPORT.maxExportBatchSize,
          scheduledDelayMillis: EXPORT.scheduledDelayMillis,
          exportTimeoutMillis: EXPORT.timeoutMillis,
        }),
      ],
    });
    this.tracer = this.provider.getTracer('switchyard');
  }

  start(req: TracedRequest): RequestTrace {
    const incoming = req.header('traceparent');
    const parent = parseTraceparent(incoming);
    if (parent !== null && !parent.sampled) return new PropagatedTrace(incoming!, false);
    let ctx = ROOT_CONTEXT;
    let traceId: string;
    if (parent === null) {
      traceId = this.ids.traceId();
      if (this.root.shouldSample(ROOT_CONTEXT, traceId).decision !== SamplingDecision.RECORD_AND_SAMPLED) {
        return new PropagatedTrace(formatTraceparent(traceId, this.ids.spanId(), false), true);
      }
    } else {
      traceId = parent.traceId;
      const state = req.header('tracestate');
      ctx = trace.setSpanContext(ROOT_CONTEXT, {
        traceId,
        spanId: parent.spanId,
        traceFlags: TraceFlags.SAMPLED,
        isRemote: true,
        ...(state === undefined ? {} : { traceState: createTraceState(state) }),
      });
    }
    const host = req.header('host');
    const route = req.meter;
    const attributes: Attributes = {
      'http.request.method': req.method,
      'url.path': req.path,
      'url.scheme': req.scheme,
      'client.address': req.clientAddress,
    };
    if (route !== null) {
      attributes['http.route'] = route.route;
      attributes['switchyard.tenant'] = route.tenant;
      attributes['switchyard.route'] = route.route;
    }
    if (host !== undefined) [attributes['server.address'], attributes['server.port']] = serverAddress(`${req.scheme}://${host}`);
    this.nextTraceId = traceId;
    const span = this.tracer.startSpan(route === null ? `HTTP ${req.method}` : `${req.method} ${route.route}`, { kind: SpanKind.SERVER, attributes }, ctx);
    this.nextTraceId = null;
    return new RecordedTrace(this.tracer, span, traceId, parent === null, req);
  }

  async flush(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((r) => (timer = setTimeout(r, timeoutMs)));
    await Promise.race([this.provider.forceFlush().catch(noop), late]);
    clearTimeout(timer);
  }
}

function noop(): void {}
