import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import protobuf from 'protobufjs';
import { waitFor } from './wait.js';

/** One span as received, ids in hex, attributes flattened to plain values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 2 SERVER, 3 CLIENT. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  statusCode: number;
  traceState: string;
  /** Nanoseconds since the epoch. */
  startTimeUnixNano: bigint;
  endTimeUnixNano: bigint;
  /** The resource's attributes (service.name, …). */
  resource: Record<string, string | number | boolean>;
}

export const SERVER = 2;
export const CLIENT = 3;

export interface OtlpReceiver {
  port: number;
  /** `http://127.0.0.1:<port>/v1/traces`: worker.json `tracing.endpoint`. */
  url: string;
  spans: ReceivedSpan[];
  /** Headers of every export request received. */
  exports: IncomingHttpHeaders[];
  /** `answer`: collect and answer 200 (default); `hang`: read the request and never answer. */
  mode: 'answer' | 'hang';
  /** Export requests left unanswered in `hang` mode. */
  hung: number;
  /** Waits until `pred` holds for the spans received so far. */
  waitForSpans(what: string, pred: (spans: ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

/**
 * The part of OTLP's trace schema a receiver reads (opentelemetry-proto's
 * collector/trace/v1, trace/v1, common/v1 and resource/v1, field numbers as published),
 * decoded by protobufjs: the exporter's hand-written encoding is checked against it.
 */
const OTLP_TRACE_PROTO = `
syntax = "proto3";
package otlp;
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; string schema_url = 3; }
message Resource { repeated KeyValue attributes = 1; uint32 dropped_attributes_count = 2; }
message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; string schema_url = 3; }
message InstrumentationScope { string name = 1; string version = 2; }
message KeyValue { string key = 1; AnyValue value = 2; }
message AnyValue { oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4; } }
message Status { string message = 2; int32 code = 3; }
message Span {
  bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4; fixed32 flags = 16;
  string name = 5; int32 kind = 6; fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8;
  repeated KeyValue attributes = 9; uint32 dropped_attributes_count = 10; Status status = 15;
}
`;
const ExportRequest = protobuf.parse(OTLP_TRACE_PROTO, { keepCase: true }).root.lookupType('otlp.ExportTraceServiceRequest');

interface AnyValue {
  string_value?: string;
  bool_value?: boolean;
  int_value?: string;
  double_value?: number;
}
interface KeyValue {
  key: string;
  value?: AnyValue;
}
interface DecodedSpan {
  trace_id: Buffer;
  span_id: Buffer;
  parent_span_id: Buffer;
  trace_state: string;
  name: string;
  kind: number;
  start_time_unix_nano: string;
  end_time_unix_nano: string;
  attributes: KeyValue[];
  status?: { code: number };
}
interface DecodedExport {
  resource_spans: { resource?: { attributes: KeyValue[] }; scope_spans: { spans: DecodedSpan[] }[] }[];
}

function flatten(attrs: KeyValue[]): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of attrs) {
    const v = value?.string_value ?? (value?.int_value !== undefined ? Number(value.int_value) : undefined) ?? value?.bool_value ?? value?.double_value;
    if (v !== undefined) out[key] = v;
  }
  return out;
}

/** An OTLP/HTTP protobuf export body's spans (throws on a body that is not one). */
export function decodeSpans(body: Uint8Array): ReceivedSpan[] {
  const decoded = ExportRequest.toObject(ExportRequest.decode(body), { longs: String, bytes: Buffer, defaults: true, arrays: true }) as DecodedExport;
  const out: ReceivedSpan[] = [];
  for (const rs of decoded.resource_spans) {
    const resource = flatten(rs.resource?.attributes ?? []);
    for (const ss of rs.scope_spans) {
      for (const s of ss.spans) {
        out.push({
          traceId: Buffer.from(s.trace_id).toString('hex'),
          spanId: Buffer.from(s.span_id).toString('hex'),
          parentSpanId: Buffer.from(s.parent_span_id).toString('hex'),
          name: s.name,
          kind: s.kind,
          attributes: flatten(s.attributes),
          statusCode: s.status?.code ?? 0,
          traceState: s.trace_state,
          startTimeUnixNano: BigInt(s.start_time_unix_nano),
          endTimeUnixNano: BigInt(s.end_time_unix_nano),
          resource,
        });
      }
    }
  }
  return out;
}

/**
 * An OTLP/HTTP trace receiver (node:http on 127.0.0.1, port chosen by the kernel) that
 * collects the spans of the protobuf exports it is sent. Closed after the test.
 */
export async function startOtlpReceiver(t: { after(fn: () => unknown): void }): Promise<OtlpReceiver> {
  const sockets = new Set<Socket>();
  const rec: OtlpReceiver = {
    port: 0,
    url: '',
    spans: [],
    exports: [],
    mode: 'answer',
    hung: 0,
    waitForSpans: (what, pred, timeoutMs = 10_000) => waitFor(what, () => (pred(rec.spans) ? rec.spans : undefined), { timeoutMs, intervalMs: 50 }),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (rec.mode === 'hang') return void rec.hung++;
      rec.exports.push(req.headers);
      try {
        if (req.headers['content-type'] !== 'application/x-protobuf') throw new Error(`content-type ${req.headers['content-type']}`);
        rec.spans.push(...decodeSpans(Buffer.concat(chunks)));
      } catch {
        res.writeHead(400).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  rec.port = (server.address() as AddressInfo).port;
  rec.url = `http://127.0.0.1:${rec.port}/v1/traces`;
  t.after(() => rec.close());
  return rec;
}
