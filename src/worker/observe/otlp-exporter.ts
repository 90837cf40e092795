import { Client } from 'undici';

/** What the exporter may hold and spend: a collector that is down or hangs costs dropped spans, never requests. */
export const EXPORT = {
  /** Ended spans waiting for export; past this, new ones are dropped. */
  maxQueue: 2048,
  /** Spans in one export; a full batch goes at once, else the queue goes every intervalMs. */
  batch: 512,
  intervalMs: 1_000,
  /** One export gives up after this. */
  timeoutMs: 5_000,
  /** Exports in flight at once (a hanging collector holds each until its timeout). */
  inFlight: 2,
};

/**
 * Ended spans (OTLP/JSON objects, otlp-span.ts) sent in batches to an OTLP/HTTP traces
 * endpoint over keep-alive connections: at most EXPORT.inFlight requests at once, each
 * bounded by EXPORT.timeoutMs; what the queue cannot hold is dropped and reported through
 * `warn` (throttled by its maker). Nothing here waits on the request path.
 */
export class OtlpExporter {
  private queue: string[] = [];
  private inFlight = 0;
  private dropped = 0;
  private scheduled = false;
  private readonly client: Client;
  private readonly path: string;
  private readonly head: string;
  private readonly headers: Record<string, string>;
  private readonly settled: (() => void)[] = [];

  constructor(
    endpoint: string,
    serviceName: string,
    headers: Record<string, string>,
    private readonly warn: (message: string) => void,
  ) {
    const url = new URL(endpoint);
    this.client = new Client(url.origin, { headersTimeout: EXPORT.timeoutMs, bodyTimeout: EXPORT.timeoutMs, connectTimeout: EXPORT.timeoutMs, pipelining: 1 });
    this.path = url.pathname + url.search;
    this.headers = { ...headers, 'content-type': 'application/json' };
    this.head = `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":${JSON.stringify(serviceName)}}}]},"scopeSpans":[{"scope":{"name":"switchyard"},"spans":[`;
    setInterval(() => this.send(), EXPORT.intervalMs).unref();
  }

  /** An ended span, queued; a full batch leaves on the next turn of the event loop. */
  add(span: string): void {
    if (this.queue.length >= EXPORT.maxQueue) {
      this.dropped++;
      return;
    }
    this.queue.push(span);
    if (this.queue.length >= EXPORT.batch && !this.scheduled) {
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        this.send();
      });
    }
  }

  /** Sends batches while the queue has spans and an export slot is free. */
  private send(): void {
    if (this.dropped > 0) {
      this.warn(`${this.dropped} spans dropped: the export queue was full`);
      this.dropped = 0;
    }
    while (this.queue.length > 0 && this.inFlight < EXPORT.inFlight) {
      const spans = this.queue.length <= EXPORT.batch ? this.queue : this.queue.slice(0, EXPORT.batch);
      this.queue = spans === this.queue ? [] : this.queue.slice(EXPORT.batch);
      this.post(`${this.head}${spans.join(',')}]}]}]}`);
    }
  }

  private post(body: string): void {
    this.inFlight++;
    const done = (problem: string | null) => {
      this.inFlight--;
      if (problem !== null) this.warn(`span export failed: ${problem}`);
      if (this.inFlight === 0) for (const s of this.settled.splice(0)) s();
      if (this.queue.length >= EXPORT.batch) this.send();
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
    this.send();
    if (this.inFlight === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([new Promise<void>((r) => this.settled.push(r)), new Promise<void>((r) => (timer = setTimeout(r, timeoutMs)))]);
    clearTimeout(timer);
    this.send();
  }
}
