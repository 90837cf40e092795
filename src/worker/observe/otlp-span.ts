/**
 * One span as OTLP/JSON writes it, built as it happens: its attributes are encoded as they
 * are set, so ending it is one concatenation and exporting a batch is a join. The
 * OpenTelemetry SDK's span, batch processor and JSON serializer cost about three times
 * this per request (bench/README.md, "Latest results").
 */

/** OTLP's SpanKind. */
export const SERVER = 2;
export const CLIENT = 3;

const ORIGIN = performance.timeOrigin;

/** Epoch milliseconds with sub-millisecond precision. */
export function nowMs(): number {
  return ORIGIN + performance.now();
}

/** Epoch milliseconds as OTLP's decimal string of nanoseconds (to a quarter of a microsecond: a double's precision at today's epoch). */
export function nanos(ms: number): string {
  let whole = Math.floor(ms);
  let sub = Math.round((ms - whole) * 1e6);
  if (sub >= 1e6) {
    whole += 1;
    sub -= 1e6;
  }
  return `${whole}${String(sub + 1_000_000).slice(1)}`;
}

export class OtlpSpan {
  private attrs = '';
  private error = false;
  private readonly startedAt = nowMs();

  constructor(
    readonly traceId: string,
    readonly spanId: string,
    /** '' for a root span. */
    private readonly parentSpanId: string,
    private readonly name: string,
    private readonly kind: number,
    private readonly traceState: string | undefined,
  ) {}

  /** A string attribute from anywhere (a path, a service URL): escaped as JSON. */
  str(key: string, value: string): this {
    this.attrs += `,{"key":"${key}","value":{"stringValue":${JSON.stringify(value)}}}`;
    return this;
  }

  /**
   * A string attribute the gateway made or checked (a method token, an entity name, an IP
   * address, a Host the data server let in, an id it validated): nothing in it needs escaping.
   */
  safe(key: string, value: string): this {
    this.attrs += `,{"key":"${key}","value":{"stringValue":"${value}"}}`;
    return this;
  }

  int(key: string, value: number): this {
    this.attrs += `,{"key":"${key}","value":{"intValue":${Math.trunc(value)}}}`;
    return this;
  }

  /** The span's status is ERROR (OTLP STATUS_CODE_ERROR). */
  failed(): this {
    this.error = true;
    return this;
  }

  /** The span ended now: its OTLP/JSON object. */
  end(): string {
    const parent = this.parentSpanId === '' ? '' : `,"parentSpanId":"${this.parentSpanId}"`;
    const state = this.traceState === undefined ? '' : `,"traceState":${JSON.stringify(this.traceState)}`;
    const status = this.error ? ',"status":{"code":2}' : '';
    return (
      `{"traceId":"${this.traceId}","spanId":"${this.spanId}"${parent}${state},"name":${JSON.stringify(this.name)},"kind":${this.kind},` +
      `"startTimeUnixNano":"${nanos(this.startedAt)}","endTimeUnixNano":"${nanos(nowMs())}","attributes":[${this.attrs.slice(1)}]${status}}`
    );
  }
}
