import { lengthDelimited, ProtoWriter, stringField, tag, varintSize } from './proto-writer.js';
import type { OtlpSpan } from './otlp-span.js';

/** Spans in one export at most; a full batch is ready at once. */
export const BATCH_SPANS = 512;
/** A batch's buffer; a batch closes early when its next span may not fit (a span larger than this gets its own). */
export const BATCH_BYTES = 256 * 1024;

/** Spans encoded into one export body, after room for the body's head. */
interface Batch {
  readonly w: ProtoWriter;
  spans: number;
}

/** A batch ready to send: its export body, and the buffer to give back once the collector answered. */
export interface ReadyBatch {
  readonly body: Buffer;
  readonly buffer: Buffer;
  readonly spans: number;
}

/**
 * Ended spans encoded as OTLP protobuf, each straight into the buffer of the batch being
 * filled: a batch is one ExportTraceServiceRequest { resource_spans: [{ resource,
 * scope_spans: [{ scope, spans }] }] } whose head is written in front of its spans when
 * it is taken, so nothing is copied or joined. Buffers come back through `release`.
 */
export class SpanBatches {
  private filling: Batch | null = null;
  private readonly ready: Batch[] = [];
  private readonly spare: Buffer[] = [];
  /** Spans in batches not taken yet. */
  queued = 0;
  /** ResourceSpans.resource and ScopeSpans.scope, encoded once. */
  private readonly resource: Buffer;
  private readonly scope: Buffer;
  /** Bytes before a batch's first span: the longest head it can need. */
  private readonly room: number;

  constructor(
    serviceName: string,
    /** Buffers kept for reuse at most. */
    private readonly spares: number,
  ) {
    // Resource { attributes: [KeyValue { key: "service.name", value: { string_value } }] }
    const name = Buffer.concat([stringField(1, 'service.name'), lengthDelimited(2, stringField(1, serviceName))]);
    this.resource = lengthDelimited(1, lengthDelimited(1, name));
    this.scope = lengthDelimited(1, stringField(1, 'switchyard'));
    this.room = 2 + 2 * 5 + this.resource.length + this.scope.length;
  }

  /** Encodes an ended span; returns true when that filled its batch (it is ready). */
  add(span: OtlpSpan): boolean {
    const need = span.maxBytes();
    let b = this.filling;
    if (b !== null && b.w.pos + need > b.w.buf.length) b = this.seal();
    b ??= this.filling = this.batchFor(need);
    span.writeTo(b.w, 2);
    b.spans++;
    this.queued++;
    if (b.spans < BATCH_SPANS) return false;
    this.seal();
    return true;
  }

  /** Whether a batch is ready to send. */
  get hasReady(): boolean {
    return this.ready.length > 0;
  }

  /** The batch being filled is ready too, if it holds a span. */
  sealFilling(): void {
    if (this.filling !== null && this.filling.spans > 0) this.seal();
  }

  /** The oldest ready batch, its head written; null when none is ready. */
  take(): ReadyBatch | null {
    const b = this.ready.shift();
    if (b === undefined) return null;
    this.queued -= b.spans;
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
    return { body: b.w.buf.subarray(start, b.w.pos), buffer: b.w.buf, spans: b.spans };
  }

  /** A sent batch's buffer, free again (the collector answered, so no socket holds it). */
  release(buffer: Buffer): void {
    if (buffer.length === BATCH_BYTES && this.spare.length < this.spares) this.spare.push(buffer);
  }

  private batchFor(need: number): Batch {
    const size = Math.max(BATCH_BYTES, this.room + need);
    const buf = size === BATCH_BYTES && this.spare.length > 0 ? this.spare.pop()! : Buffer.allocUnsafe(size);
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
}
