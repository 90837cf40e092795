import { Client } from 'undici';
import type { OtlpSpan } from './otlp-span.js';
import { SpanBatches } from './span-batches.js';

/** What the exporter may hold and spend: a collector that is down or hangs costs dropped spans, never requests. */
export const EXPORT = {
  /** Ended spans waiting for export; past this, new ones are dropped. */
  maxQueue: 2048,
  /** What is queued goes at least this often (a full batch goes at once). */
  intervalMs: 1_000,
  /** One export gives up after this. */
  timeoutMs: 5_000,
  /** Exports in flight at once (a hanging collector holds each until its timeout). */
  inFlight: 2,
} as const;

/**
 * Ended spans, encoded into batches once per turn of the event loop (span-batches.ts), sent
 * to an OTLP/HTTP traces endpoint over keep-alive connections: at most EXPORT.inFlight requests at once,
 * each bounded by EXPORT.timeoutMs; what the queue cannot hold is dropped and reported
 * through `warn` (throttled by its maker). Nothing here waits on the request path.
 */
export class OtlpExporter {
  private readonly batches: SpanBatches;
  private inFlight = 0;
  private dropped = 0;
  /** Spans ended in this turn, not encoded yet. */
  private readonly ended: OtlpSpan[] = [];
  private readonly client: Client;
  private readonly path: string;
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
    this.headers = { ...headers, 'content-type': 'application/x-protobuf' };
    this.batches = new SpanBatches(serviceName, EXPORT.inFlight + 2);
    setInterval(() => this.send(true), EXPORT.intervalMs).unref();
  }

  /**
   * An ended span: queued, and encoded with the rest of its turn's spans after that turn's
   * requests (one pass over the encoder instead of one between each two requests); a full
   * batch leaves at the end of that pass.
   */
  add(span: OtlpSpan): void {
    if (this.batches.queued + this.ended.length >= EXPORT.maxQueue) {
      this.dropped++;
      return;
    }
    if (this.ended.push(span) === 1) setImmediate(this.encodeTurn);
  }

  /** The queued spans, encoded into batches; sends what that filled. */
  private readonly encodeTurn = (): void => {
    if (this.encodeEnded()) this.send(false);
  };

  /** Encodes the queued spans; returns whether a batch filled. */
  private encodeEnded(): boolean {
    const spans = this.ended;
    let full = false;
    for (let i = 0; i < spans.length; i++) if (this.batches.add(spans[i]!)) full = true;
    spans.length = 0;
    return full;
  }

  /** Sends ready batches while an export slot is free; `all`: this turn's spans and the batch being filled too. */
  private send(all: boolean): void {
    if (this.dropped > 0) {
      this.warn(`${this.dropped} spans dropped: the export queue was full`);
      this.dropped = 0;
    }
    if (all) {
      this.encodeEnded();
      this.batches.sealFilling();
    }
    while (this.inFlight < EXPORT.inFlight) {
      const b = this.batches.take();
      if (b === null) break;
      this.post(b.buffer, b.body);
    }
  }

  private post(buffer: Buffer, body: Buffer): void {
    this.inFlight++;
    const done = (problem: string | null) => {
      this.inFlight--;
      // A buffer is used again only once its export was answered: a failed one may still be held by its socket.
      if (problem === null) this.batches.release(buffer);
      else this.warn(`span export failed: ${problem}`);
      if (this.inFlight === 0) for (const s of this.settled.splice(0)) s();
      if (this.batches.hasReady) this.send(false);
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
