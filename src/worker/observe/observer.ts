import type { ExchangeEnd } from '../exchange-end.js';
import type { StaticReply } from '../response-head.js';
import type { Downstream, RequestHead } from '../engine/contract.js';
import type { DataMetrics } from './data-metrics.js';
import type { RequestRecord } from './request-record.js';
import { ExchangeRecord, FixedRecord } from './records.js';

/** Where finished requests' records go (the access log). */
export interface RecordSink {
  /** Whether this request is to be written (drawn once per request, at its start, before any record is made). */
  sampled(): boolean;
  write(rec: RequestRecord): void;
}

/**
 * What happens when a request ended, once: its route's counters (unless worker.json
 * `metrics.enabled` is false) and its access log line (when `log.access` is on). Built
 * once per worker; the data server calls it for every request.
 */
export class RequestObserver {
  /** Records may be made: the data server asks `sampled()` per exchange. */
  readonly recording: boolean;

  constructor(
    readonly meters: DataMetrics,
    private readonly counting: boolean,
    private readonly sink: RecordSink | null,
  ) {
    this.recording = sink !== null;
  }

  /** This request's record is to be made: its exchange keeps what a record reads after its end (its client address). */
  sampled(): boolean {
    return this.sink !== null && this.sink.sampled();
  }

  /** Neither counts nor records: the data server skips it. */
  get idle(): boolean {
    return !this.counting && this.sink === null;
  }

  /** An exchange ended: answered, cut, or left by its client (its finalStatus is decided). */
  exchangeEnded(ex: ExchangeEnd): void {
    const status = ex.finalStatus;
    const ms = performance.now() - ex.startedAt;
    const meter = ex.meter ?? this.meters.unmatched;
    if (this.counting) this.meters.ended(meter, ex.method, status, ms / 1000, ex.bytesReceived, ex.bytesSent);
    // A gRPC call also counts by its grpc-status (its HTTP status is 200 even when refused); any other request costs this one check.
    let grpcStatus: number | null = null;
    if (ex.grpc !== null) {
      grpcStatus = ex.grpc.statusAtEnd(status);
      if (this.counting) this.meters.grpcEnded(meter, grpcStatus);
    }
    if (ex.logged) this.sink!.write(new ExchangeRecord(ex, status, ms, grpcStatus));
  }

  /** A fixed answer written from the request callback (the engine's request head is still valid). */
  fixedAnswered(r: StaticReply, req: RequestHead, down: Downstream, method: string, path: string, requestId: string, client: (peer: string, req: RequestHead) => string): void {
    const sent = method === 'HEAD' ? 0 : r.bodyBytes;
    // No Exchange, so no decision (final-status.ts): written whole within the callback, while
    // the client is known to be there, and nothing follows that could cut it.
    const status = r.status;
    if (this.counting) this.meters.ended(r.meter ?? this.meters.unmatched, method, status, 0, 0, sent);
    // A request not sampled costs no record: its headers and peer address are not read.
    if (this.sink !== null && this.sink.sampled()) this.sink.write(new FixedRecord(r, status, req, down, method, path, requestId, sent, client));
  }
}
