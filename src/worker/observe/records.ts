import type { Exchange } from '../exchange.js';
import { formatAddress } from '../peer-address.js';
import type { StaticReply } from '../response-head.js';
import type { HttpRequest, HttpResponse } from '../uws.js';
import type { RequestRecord } from './request-record.js';

/** An exchange's record, read from it when it ended (its client address was read at its start). */
export class ExchangeRecord implements RequestRecord {
  readonly startedAt: number;

  constructor(
    private readonly ex: Exchange,
    readonly status: number,
    readonly durationMs: number,
  ) {
    this.startedAt = Date.now() - durationMs;
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
  get bytesReceived(): number {
    return this.ex.bytesReceived;
  }
  get bytesSent(): number {
    return this.ex.bytesSent;
  }
  get upstream(): string | null {
    return this.ex.upstream;
  }
  get upstreamMs(): number | null {
    return this.ex.upstreamMs;
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
  readonly status: number;
  readonly query: string | null;
  readonly bytesReceived = 0;
  readonly upstream = null;
  readonly upstreamMs = null;
  readonly client: string;
  readonly userAgent: string | undefined;
  readonly referer: string | undefined;
  readonly traceId: string | null = null;

  constructor(
    r: StaticReply,
    req: HttpRequest,
    res: HttpResponse,
    readonly method: string,
    readonly path: string,
    readonly requestId: string,
    readonly bytesSent: number,
    client: (peer: string, req: HttpRequest) => string,
  ) {
    this.tenant = r.meter?.tenant ?? '';
    this.route = r.meter?.route ?? '';
    this.status = r.status;
    // No path (a target too long to log): no query either.
    this.query = path === '' ? null : (req.getQuery() ?? null);
    this.client = client(formatAddress(res.getRemoteAddress()), req);
    this.userAgent = req.getHeader('user-agent') || undefined;
    this.referer = req.getHeader('referer') || undefined;
  }
}
