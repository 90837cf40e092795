import { ProtoWriter, stringField, tag, varintSize } from './proto-writer.js';

/**
 * One span as OTLP's protobuf `Span` writes it. While it runs it keeps references (ids,
 * names, the path) and numbers in fixed fields, no array: V8 moved the growing attribute
 * arrays of an earlier version straight to its old generation, where each kept its
 * request's strings alive past the young collections. It is encoded once, when it is
 * exported, straight into the export batch's buffer (otlp-exporter.ts).
 */

/** OTLP's SpanKind. */
export const SERVER = 2;
export const CLIENT = 3;

/** An attribute's key, encoded once as KeyValue's `key` field. */
const attributeKey = (name: string): Buffer => stringField(1, name);

/** The attributes the gateway sets (OpenTelemetry's HTTP semantic conventions, and its own), in the order written. */
const KEY = {
  method: attributeKey('http.request.method'),
  path: attributeKey('url.path'),
  scheme: attributeKey('url.scheme'),
  client: attributeKey('client.address'),
  route: attributeKey('http.route'),
  tenant: attributeKey('switchyard.tenant'),
  routeName: attributeKey('switchyard.route'),
  serverAddress: attributeKey('server.address'),
  serverPort: attributeKey('server.port'),
  requestId: attributeKey('switchyard.request_id'),
  status: attributeKey('http.response.status_code'),
  errorType: attributeKey('error.type'),
};
const KEYS_BYTES = Object.values(KEY).reduce((n, k) => n + k.length, 0);

const ORIGIN = performance.timeOrigin;

/** Bytes a span takes besides its strings and keys: ids, kind, times, status, field tags and lengths. */
const SPAN_FIXED = 96 + 12 * 16;

export class OtlpSpan {
  /** `http.request.method`. */
  method = '';
  /** `url.path` (a SERVER span). */
  path = '';
  /** `url.scheme`, `client.address` (a SERVER span). */
  scheme = '';
  client = '';
  /** `http.route` and `switchyard.route`, `switchyard.tenant`: '' when no route took the request. */
  route = '';
  tenant = '';
  /** `server.address` and `server.port`: '' and 0 when unknown. */
  serverAddress = '';
  serverPort = 0;
  /** `switchyard.request_id`: '' without one. */
  requestId = '';
  /** `http.response.status_code`: 0 until answered. */
  status = 0;
  /** `error.type`: '' unless the span failed. */
  errorType = '';
  /** The span's status is ERROR (OTLP STATUS_CODE_ERROR). */
  failed = false;
  private readonly startedAt = performance.now();
  private endedAt = 0;

  constructor(
    readonly traceId: string,
    readonly spanId: string,
    /** '' for a root span. */
    private readonly parentSpanId: string,
    private readonly name: string,
    private readonly kind: number,
    private readonly traceState: string | undefined,
  ) {}

  /** The span ended now. */
  end(): this {
    this.endedAt = performance.now();
    return this;
  }

  /** At most the bytes `writeTo` takes (a UTF-8 character takes at most 3 bytes per UTF-16 unit). */
  maxBytes(): number {
    const chars =
      this.name.length + (this.traceState?.length ?? 0) + this.method.length + this.path.length + this.scheme.length + this.client.length +
      2 * this.route.length + this.tenant.length + this.serverAddress.length + this.requestId.length + this.errorType.length;
    return SPAN_FIXED + KEYS_BYTES + 3 * chars;
  }

  /**
   * Writes the span as field `field` (ScopeSpans.spans) of the message being written. The
   * method, route, tenant, scheme, client address and request id are ASCII the gateway
   * checked or made; the path, a call's target and an error's text may be any text.
   */
  writeTo(w: ProtoWriter, field: number): void {
    const start = w.open(field);
    w.hex(1, this.traceId);
    w.hex(2, this.spanId);
    if (this.traceState !== undefined) w.text(3, this.traceState);
    if (this.parentSpanId !== '') w.hex(4, this.parentSpanId);
    w.text(5, this.name);
    w.byte(tag(6, 0));
    w.byte(this.kind);
    w.nanos(7, ORIGIN + this.startedAt);
    w.nanos(8, ORIGIN + (this.endedAt || performance.now()));
    const server = this.kind === SERVER;
    if (this.method !== '') writeString(w, KEY.method, this.method, server);
    if (this.path !== '') writeString(w, KEY.path, this.path, false);
    if (this.scheme !== '') writeString(w, KEY.scheme, this.scheme, true);
    if (this.client !== '') writeString(w, KEY.client, this.client, true);
    if (this.route !== '') {
      writeString(w, KEY.route, this.route, true);
      writeString(w, KEY.tenant, this.tenant, true);
      writeString(w, KEY.routeName, this.route, true);
    }
    if (this.serverAddress !== '') {
      // A Host the data server let in has host-name or IP characters only; a call's target is configuration.
      writeString(w, KEY.serverAddress, this.serverAddress, server);
      writeInt(w, KEY.serverPort, this.serverPort);
    }
    if (this.requestId !== '') writeString(w, KEY.requestId, this.requestId, true);
    if (this.status !== 0) writeInt(w, KEY.status, this.status);
    if (this.errorType !== '') writeString(w, KEY.errorType, this.errorType, false);
    if (this.failed) w.bytes(ERROR_STATUS);
    w.close(start);
  }
}

const ERROR_STATUS = Buffer.from([tag(15, 2), 2, tag(3, 0), 2]);

/** Span.attributes (field 9): KeyValue { key, value: AnyValue { string_value (1) } }, lengths known before writing. */
function writeString(w: ProtoWriter, key: Buffer, value: string, ascii: boolean): void {
  const bytes = ascii ? value.length : Buffer.byteLength(value, 'utf8');
  const any = 1 + varintSize(bytes) + bytes;
  w.byte(tag(9, 2));
  w.varint(key.length + 1 + varintSize(any) + any);
  w.bytes(key);
  w.byte(tag(2, 2));
  w.varint(any);
  w.byte(tag(1, 2));
  w.varint(bytes);
  if (ascii) w.asciiBytes(value);
  else w.pos += w.buf.write(value, w.pos, 'utf8');
}

/** KeyValue { key, value: AnyValue { int_value (3) } } of a non-negative integer. */
function writeInt(w: ProtoWriter, key: Buffer, value: number): void {
  const n = Math.max(0, Math.trunc(value));
  const any = 1 + varintSize(n);
  w.byte(tag(9, 2));
  w.varint(key.length + 2 + any);
  w.bytes(key);
  w.byte(tag(2, 2));
  w.byte(any);
  w.byte(tag(3, 0));
  w.varint(n);
}
