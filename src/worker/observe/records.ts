import type { ExchangeEnd } from '../exchange-end.js';
import type { StaticReply } from '../response-head.js';
import type { Downstream, RequestHead } from '../engine/contract.js';
import type { RequestRecord } from './request-record.js';
import type { QueryPair } from '../../shared/url-query.js';
import { ParsedOnDemand } from '../../shared/parsed-on-demand.js';

/**
 * An exchange's record, made when it ended (its client address was read at its start). Its
 * line is written later in the same turn: what may still move (a body's bytes that arrive
 * after the answer) is copied now; the rest is read from the exchange, which no longer changes it.
 */
export class ExchangeRecord implements RequestRecord {
  readonly startedAt: number;
  readonly bytesReceived: number;
  readonly bytesSent: number;
  readonly upstream: string | null;
  readonly upstreamMs: number | null;

  constructor(
    private readonly ex: ExchangeEnd,
    readonly status: number,
    readonly durationMs: number,
    readonly grpcStatus: number | null,
  ) {
    this.startedAt = Date.now() - durationMs;
    this.bytesReceived = ex.bytesReceived;
    this.bytesSent = ex.bytesSent;
    this.upstream = ex.upstream;
    this.upstreamMs = ex.upstreamMs;
  }

  get requestId(): string {
    return this.ex.requestId;
  }
  get traceId(): string | null {
    return this.ex.trace?.traceId ?? null;
  }
  get tenant(): string {
    return this.ex.meter?.tenant ?? '';
  }
  get route(): string {
    return this.ex.meter?.route ?? '';
  }
  get method(): string {
    return this.ex.method;
  }
  get path(): string {
    return this.ex.path;
  }
  get query(): string | null {
    return this.ex.query;
  }
  get queryPairs(): readonly QueryPair[] {
    return this.ex.queryPairs;
  }
  get client(): string {
    return this.ex.clientAddress;
  }
  get userAgent(): string | undefined {
    return this.ex.header('user-agent');
  }
  get referer(): string | undefined {
    return this.ex.header('referer');
  }
}

/** A fixed answer's record, copied from uWS's request during its callback. */
export class FixedRecord implements RequestRecord {
  readonly startedAt = Date.now();
  readonly durationMs = 0;
  readonly tenant: string;
  readonly route: string;
  readonly query: string | null;
  readonly bytesReceived = 0;
  // A gRPC call's refusal always goes through an Exchange (data-server.ts): a fixed answer never is one.
  readonly grpcStatus = null;
  readonly upstream = null;
  readonly upstreamMs = null;
  readonly client: string;
  readonly userAgent: string | undefined;
  readonly referer: string | undefined;
  readonly traceId: string | null = null;
  private parsed: ParsedOnDemand | null = null;

  constructor(
    r: StaticReply,
    /** Its final status (final-status.ts). */
    readonly status: number,
    req: RequestHead,
    down: Downstream,
    readonly method: string,
    readonly path: string,
    readonly requestId: string,
    readonly bytesSent: number,
    client: (peer: string, req: RequestHead) => string,
  ) {
    this.tenant = r.meter?.tenant ?? '';
    this.route = r.meter?.route ?? '';
    // No path (a target too long to log): no query either.
    this.query = path === '' ? null : (req.getQuery() ?? null);
    this.client = client(down.remoteAddress(), req);
    this.userAgent = req.getHeader('user-agent') || undefined;
    this.referer = req.getHeader('referer') || undefined;
  }

  get queryPairs(): readonly QueryPair[] {
    return (this.parsed ??= new ParsedOnDemand(this.query, [])).queryPairs;
  }
}
