import { Client } from 'undici';
import { ProtoWriter, stringField, tag, varintSize } from './proto-writer.js';
import type { OtlpSpan } from './otlp-span.js';

/** What the exporter may hold and spend: a collector that is down or hangs costs dropped spans, never requests. */
export const EXPORT = {
  /** Ended spans waiting for export; past this, new ones are dropped. */
  maxQueue: 2048,
  /** Spans in one export; a full batch goes at once, else what is queued goes every intervalMs. */
  batch: 512,
  intervalMs: 1_000,
  /** One export gives up after this. */
  timeoutMs: 5_000,
  /** Exports in flight at once (a hanging collector holds each until its timeout). */
  inFlight: 2,
  /** A batch's buffer; a batch closes early when its next span may not fit (a span larger than this gets its own). */
  batchBytes: 256 * 1024,
};

/** Spans being encoded into one export body, after room for the body's head. */
interface Batch {
  readonly w: ProtoWriter;
  spans: number;
}

/**
 * Ended spans encoded as OTLP protobuf into batch buffers as they end, and sent to an
 * OTLP/HTTP traces endpoint over keep-alive connections: at most EXPORT.inFlight
 * requests at once, each bounded by EXPORT.timeoutMs; what the queue cannot hold is
 * dropped and reported through `warn` (throttled by its maker). Nothing here waits on
 * the request path, and a sent batch's buffer is used again once the collector answered.
 */
export class OtlpExporter {
  private filling: Batch | null = null;
  private ready: Batch[] = [];
  /** Spans in `filling` and `ready`. */
  private queued = 0;
  private inFlight = 0;
  private dropped = 0;
  private scheduled = false;
  private readonly spare: Buffer[] = [];
  private readonly client: Client;
  private readonly path: string;
  private readonly headers: Record<string, string>;
  private readonly settled: (() => void)[] = [];
  /** ResourceSpans.resource and ScopeSpans.scope, encoded once. */
  private readonly resource: Buffer;
  private readonly scope: Buffer;
  /** Bytes before a batch's first span: the longest head it can need. */
  private readonly room: number;

  constructor(
    endpoint: string,
    serviceName: string,
    headers: Record<string, string>,
    private readonly warn: (message: string) => void,
  ) {
    const url = new URL(endpoint);
    this.client = new Client(url.origin, { headersTimeout: EXPORT.timeoutMs, bodyTimeout: EXPORT.timeoutMs, connectTimeout: EXPORT.timeoutMs, pipelining: 1 });
    this.path = url.pathname + url.search;
    this.headers = { ...headers, 'content-type': 'application/x-protobuf' };
    // Resource { attributes: [KeyValue { key: "service.name", value: { string_value } }] }
    const name = Buffer.concat([stringField(1, 'service.name'), nested(2, stringField(1, serviceName))]);
    this.resource = nested(1, nested(1, name));
    this.scope = nested(1, stringField(1, 'switchyard'));
    this.room = 2 + 2 * 5 + this.resource.length + this.scope.length;
    setInterval(() => this.send(true), EXPORT.intervalMs).unref();
  }

  /** An ended span, encoded into the batch being filled; a full batch leaves on the next turn of the event loop. */
  add(span: OtlpSpan): void {
    if (this.queued >= EXPORT.maxQueue) {
      this.dropped++;
      return;
    }
    const need = span.maxBytes();
    let b = this.filling;
    if (b !== null && b.w.pos + need > b.w.buf.length) b = this.seal();
    b ??= this.filling = this.batchFor(need);
    span.writeTo(b.w, 2);
    b.spans++;
    this.queued++;
    if (b.spans >= EXPORT.batch) {
      this.seal();
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          this.send(false);
        });
      }
    }
  }

  private batchFor(need: number): Batch {
    const size = Math.max(EXPORT.batchBytes, this.room + need);
    const buf = size === EXPORT.batchBytes && this.spare.length > 0 ? this.spare.pop()! : Buffer.allocUnsafe(size);
    const w = new ProtoWriter(buf);
    w.pos = this.room;
    return { w, spans: 0 };
  }

  /** The batch being filled is ready to send; returns null (no batch is being filled). */
  private seal(): null {
    if (this.filling !== null) this.ready.push(this.filling);
    this.filling = null;
    return null;
  }

  /** Sends ready batches while an export slot is free; `all`: the batch being filled too. */
  private send(all: boolean): void {
    if (this.dropped > 0) {
      this.warn(`${this.dropped} spans dropped: the export queue was full`);
      this.dropped = 0;
    }
    if (all && this.filling !== null && this.filling.spans > 0) this.seal();
    while (this.ready.length > 0 && this.inFlight < EXPORT.inFlight) {
      const b = this.ready.shift()!;
      this.queued -= b.spans;
      this.post(b.w.buf, this.body(b));
    }
  }

  /** ExportTraceServiceRequest { resource_spans: [{ resource, scope_spans: [{ scope, spans }] }] }, its head written just before the spans. */
  private body(b: Batch): Buffer {
    const spans = b.w.pos - this.room;
    const scopeSpans = this.scope.length + spans;
    const resourceSpans = this.resource.length + 1 + varintSize(scopeSpans) + scopeSpans;
    const start = this.room - (1 + varintSize(resourceSpans) + this.resource.length + 1 + varintSize(scopeSpans) + this.scope.length);
    const w = new ProtoWriter(b.w.buf);
    w.pos = start;
    w.byte(tag(1, 2));
    w.varint(resourceSpans);
    w.bytes(this.resource);
    w.byte(tag(2, 2));
    w.varint(scopeSpans);
    w.bytes(this.scope);
    return b.w.buf.subarray(start, b.w.pos);
  }

  private post(buf: Buffer, body: Buffer): void {
    this.inFlight++;
    const done = (problem: string | null) => {
      this.inFlight--;
      // A buffer is used again only once its export was answered: a failed one may still be held by its socket.
      if (problem === null && buf.length === EXPORT.batchBytes && this.spare.length < EXPORT.inFlight + 2) this.spare.push(buf);
      else if (problem !== null) this.warn(`span export failed: ${problem}`);
      if (this.inFlight === 0) for (const s of this.settled.splice(0)) s();
      if (this.ready.length > 0) this.send(false);
    };
    // undici's own timeouts bound the export (no AbortSignal: its timer would hold the body for its whole delay).
    this.client
      .request({ method: 'POST', path: this.path, headers: this.headers, body })
      .then(async (res) => {
        await res.body.dump();
        done(res.statusCode >= 200 && res.statusCode < 300 ? null : `the collector answered ${res.statusCode}`);
      })
      .catch((err: Error) => done(err.message));
  }

  /** Sends what is queued and waits for the exports in flight, `timeoutMs` at most. */
  async flush(timeoutMs: number): Promise<void> {
    this.send(true);
    if (this.inFlight === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([new Promise<void>((r) => this.settled.push(r)), new Promise<void>((r) => (timer = setTimeout(r, timeoutMs)))]);
    clearTimeout(timer);
    this.send(true);
  }
}

/** A length-delimited field holding `content`. */
function nested(field: number, content: Buffer): Buffer {
  const w = new ProtoWriter(Buffer.allocUnsafe(1 + varintSize(content.length) + content.length));
  w.byte(tag(field, 2));
  w.varint(content.length);
  w.bytes(content);
  return w.buf;
}
