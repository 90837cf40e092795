import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { waitFor } from './wait.js';

/** An OTLP/JSON attribute value as the exporter writes it. */
type AnyValue = { stringValue?: string; intValue?: number | string; boolValue?: boolean; doubleValue?: number };

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

function flatten(attrs: { key: string; value: AnyValue }[] | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of attrs ?? []) {
    const v = value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : undefined) ?? value.boolValue ?? value.doubleValue;
    if (v !== undefined) out[key] = v;
  }
  return out;
}

interface ExportBody {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value: AnyValue }[] };
    scopeSpans?: { spans?: { traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; attributes?: { key: string; value: AnyValue }[]; status?: { code?: number }; traceState?: string }[] }[];
  }[];
}

/**
 * An OTLP/HTTP trace receiver (node:http on 127.0.0.1, port chosen by the kernel) that
 * collects the JSON `resourceSpans` it is sent. Closed after the test.
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
      let body: ExportBody = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ExportBody;
      } catch {
        res.writeHead(400).end();
        return;
      }
      for (const rs of body.resourceSpans ?? []) {
        const resource = flatten(rs.resource?.attributes);
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            rec.spans.push({
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId ?? '',
              name: s.name,
              kind: s.kind,
              attributes: flatten(s.attributes),
              statusCode: s.status?.code ?? 0,
              traceState: s.traceState ?? '',
              resource,
            });
          }
        }
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
