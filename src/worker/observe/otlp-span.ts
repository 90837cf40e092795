import { encodedOnce, type ProtoWriter, stringField, tag, utf8Length, varintSize } from './proto-writer.js';
import type { IdBytes } from './traceparent.js';

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
  rpcSystem: attributeKey('rpc.system'),
  rpcService: attributeKey('rpc.service'),
  rpcMethod: attributeKey('rpc.method'),
  grpcStatus: attributeKey('rpc.grpc.status_code'),
  errorType: attributeKey('error.type'),
};
const KEYS_BYTES = Object.values(KEY).reduce((n, k) => n + k.length, 0);

const ORIGIN = performance.timeOrigin;
/** `performance` is an accessor on the global object: read once, not per span. */
const clock = performance;

/** Bytes a span takes besides its strings and keys: ids, kind, times, status, field tags and lengths. */
const SPAN_FIXED = 96 + 16 * 16;

export class OtlpSpan {
  /** `http.request.method`. */
  method = '';
  /** `url.path` (a SERVER span). */
  path = '';
  /** `url.scheme`, `client.address` (a SERVER span). */
  scheme = '';
  client = '';
  /** `http.route`, `switchyard.tenant` and `switchyard.route` (routeAttributes): null when no route took the request. */
  routeAttributes: Uint8Array | null = null;
  /** `server.address` and `server.port` (serverAttributes): null when unknown. */
  serverAttributes: Uint8Array | null = null;
  /** `switchyard.request_id`: '' without one. */
  requestId = '';
  /** `http.response.status_code`: 0 until answered. */
  status = 0;
  /** `rpc.system` = `grpc` (a gRPC call's SERVER span), with `rpc.service` and `rpc.method` ('' when its path names none). */
  rpc = false;
  rpcService = '';
  rpcMethod = '';
  /** `rpc.grpc.status_code`: -1 while none is known (none reached the client, or not a gRPC call). */
  grpcStatus = -1;
  /** `error.type`: '' unless the span failed. */
  errorType = '';
  /** The span's status is ERROR (OTLP STATUS_CODE_ERROR). */
  failed = false;
  private readonly startedAt = clock.now();
  private endedAt = 0;
  /** Where the ids' bytes are when the gateway made them (TraceIds): copied when written, not decoded from hex. */
  private traceBytes: Buffer | null = null;
  private traceAt = 0;
  private spanBytes: Buffer | null = null;
  private spanAt = 0;
  private parentBytes: Buffer | null = null;
  private parentAt = 0;

  constructor(
    readonly traceId: string,
    readonly spanId: string,
    /** '' for a root span. */
    private readonly parentSpanId: string,
    private readonly name: string,
    private readonly kind: number,
    private readonly traceState: string | undefined,
  ) {}

  /** The span's id is `span`'s bytes; its trace id is `trace`'s when the gateway started the trace. */
  madeIds(span: IdBytes, trace: IdBytes | null): this {
    this.spanBytes = span.bytes;
    this.spanAt = span.at;
    if (trace !== null) {
      this.traceBytes = trace.bytes;
      this.traceAt = trace.at;
    }
    return this;
  }

  /** A child of `parent` (a call of its request): their trace id's and the parent's id's bytes are the parent's. */
  childOf(parent: OtlpSpan): this {
    this.traceBytes = parent.traceBytes;
    this.traceAt = parent.traceAt;
    this.parentBytes = parent.spanBytes;
    this.parentAt = parent.spanAt;
    return this;
  }

  /** The span ended now. */
  end(): this {
    this.endedAt = clock.now();
    return this;
  }

  /** At most the bytes `writeTo` takes (a UTF-8 character takes at most 3 bytes per UTF-16 unit). */
  maxBytes(): number {
    const chars =
      this.name.length + (this.traceState?.length ?? 0) + this.method.length + this.path.length + this.scheme.length + this.client.length +
      this.requestId.length + this.errorType.length + this.rpcService.length + this.rpcMethod.length + (this.rpc ? RPC_SYSTEM_GRPC.length : 0);
    return SPAN_FIXED + KEYS_BYTES + 3 * chars + (this.routeAttributes?.length ?? 0) + (this.serverAttributes?.length ?? 0);
  }

  /**
   * Writes the span as field `field` (ScopeSpans.spans) of the message being written. The
   * method, route, tenant, scheme, client address and request id are ASCII the gateway
   * checked or made; the path, a call's target and an error's text may be any text.
   */
  writeTo(w: ProtoWriter, field: number): void {
    const max = this.maxBytes();
    const start = w.open(field, max);
    if (this.traceBytes !== null) w.slice(1, this.traceBytes, this.traceAt, 16);
    else w.hex(1, this.traceId);
    if (this.spanBytes !== null) w.slice(2, this.spanBytes, this.spanAt, 8);
    else w.hex(2, this.spanId);
    if (this.traceState !== undefined) w.text(3, this.traceState);
    if (this.parentBytes !== null) w.slice(4, this.parentBytes, this.parentAt, 8);
    else if (this.parentSpanId !== '') w.hex(4, this.parentSpanId);
    w.text(5, this.name);
    w.byte(tag(6, 0));
    w.byte(this.kind);
    w.nanos(7, ORIGIN + this.startedAt);
    w.nanos(8, ORIGIN + (this.endedAt || clock.now()));
    if (this.method !== '') w.bytes(METHOD.of(this.method));
    if (this.path !== '') writeString(w, KEY.path, this.path, false);
    if (this.scheme !== '') w.bytes(SCHEME.of(this.scheme));
    if (this.client !== '') writeString(w, KEY.client, this.client, true);
    if (this.routeAttributes !== null) w.bytes(this.routeAttributes);
    if (this.serverAttributes !== null) w.bytes(this.serverAttributes);
    if (this.requestId !== '') writeString(w, KEY.requestId, this.requestId, true);
    if (this.status !== 0) w.bytes(statusAttribute(this.status));
    if (this.rpc) {
      w.bytes(RPC_SYSTEM_GRPC);
      if (this.rpcService !== '') writeString(w, KEY.rpcService, this.rpcService, false);
      if (this.rpcMethod !== '') writeString(w, KEY.rpcMethod, this.rpcMethod, false);
      if (this.grpcStatus >= 0) writeInt(w, KEY.grpcStatus, this.grpcStatus);
    }
    if (this.errorType !== '') writeString(w, KEY.errorType, this.errorType, false);
    if (this.failed) w.bytes(ERROR_STATUS);
    w.close(start, max);
  }
}

const ERROR_STATUS = Buffer.from([tag(15, 2), 2, tag(3, 0), 2]);
/** `rpc.system` = `grpc`, encoded once. */
const RPC_SYSTEM_GRPC = encodedOnce(KEY.rpcSystem.length + 16, (w) => writeString(w, KEY.rpcSystem, 'grpc', true));

/** A string attribute whose few values repeat (a method, a scheme): each value encoded once, the last one kept. */
class RepeatedAttribute {
  private value = '';
  private bytes: Buffer = Buffer.alloc(0);
  constructor(private readonly key: Buffer) {}

  of(value: string): Buffer {
    if (value !== this.value) {
      this.bytes = encodedOnce(this.key.length + 3 * value.length + 16, (w) => writeString(w, this.key, value, false));
      this.value = value;
    }
    return this.bytes;
  }
}
const METHOD = new RepeatedAttribute(KEY.method);
const SCHEME = new RepeatedAttribute(KEY.scheme);

/** `http.response.status_code` by status, encoded when first seen. */
const STATUS: (Buffer | undefined)[] = Array.from({ length: 1000 }, () => undefined);
function statusAttribute(status: number): Buffer {
  const n = Math.max(0, Math.trunc(status));
  let b = n < 1000 ? STATUS[n] : undefined;
  if (b === undefined) {
    b = encodedOnce(KEY.status.length + 16, (w) => writeInt(w, KEY.status, n));
    if (n < 1000) STATUS[n] = b;
  }
  return b;
}

/** A route's attributes, the same on every span of its requests: encoded once per route (tracer.ts keeps them). */
export function routeAttributes(route: string, tenant: string): Buffer {
  return encodedOnce(3 * KEYS_BYTES + 6 * (route.length + tenant.length) + 64, (w) => {
    writeString(w, KEY.route, route, false);
    writeString(w, KEY.tenant, tenant, false);
    writeString(w, KEY.routeName, route, false);
  });
}

/** `server.address` and `server.port` of a Host or a call's target, encoded once per address (a port is cut to an integer). */
export function serverAttributes(address: string, port: number): Buffer {
  return encodedOnce(2 * KEYS_BYTES + 3 * address.length + 64, (w) => {
    writeString(w, KEY.serverAddress, address, false);
    writeInt(w, KEY.serverPort, port);
  });
}

/** Span.attributes (field 9): KeyValue { key, value: AnyValue { string_value (1) } }, lengths known before writing. */
function writeString(w: ProtoWriter, key: Buffer, value: string, ascii: boolean): void {
  const bytes = ascii ? value.length : utf8Length(value);
  const any = 1 + varintSize(bytes) + bytes;
  w.byte(tag(9, 2));
  w.varint(key.length + 1 + varintSize(any) + any);
  w.bytes(key);
  w.byte(tag(2, 2));
  w.varint(any);
  w.byte(tag(1, 2));
  w.varint(bytes);
  w.string(value, bytes);
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
