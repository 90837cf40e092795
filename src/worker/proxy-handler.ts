import type { Dispatcher } from 'undici';
import type { IncomingHttpHeaders } from 'node:http';
import type { Exchange } from './exchange.js';
import { HOP_BY_HOP, connectionListed } from '../shared/hop-by-hop.js';
import { ERRORS, type ErrorCode } from '../shared/errors.js';
import type { RequestFlow } from './flow.js';

const NO_BODY_STATUS = new Set([204, 304]);

/**
 * One attempt's undici handler: relays the upstream's answer to the client as it comes
 * (head held until the first body bytes, body with backpressure both ways), or gathers
 * it whole for the flow's collectors, or drops it when a retry follows.
 */
export class ProxyHandler implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | null = null;
  private total: number | null = null;
  private bodyless = false;
  private finished = false;
  /** This attempt's answer is being dropped: another attempt follows. */
  private discarding = false;
  /** The answer is being gathered whole for the flow's collectors (cache, compression). */
  private gathering: { status: number; headers: [string, string][]; chunks: Buffer[] } | null = null;

  constructor(
    private readonly ex: Exchange,
    private readonly flow: RequestFlow | null,
    private readonly traceId: () => string,
    private readonly done: () => void,
    /** Set when another attempt is allowed: which statuses retry, and how to start it. */
    private readonly again: { statuses: ReadonlySet<number>; next: () => void } | null = null,
  ) {}

  clientAborted(): void {
    this.controller?.abort(new Error('client aborted'));
    this.finish();
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.ex.aborted) controller.abort(new Error('client aborted'));
  }

  onResponseStart(_c: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders, statusMessage?: string): void {
    if (statusCode < 200) return; // 1xx: not relayed
    if (this.again?.statuses.has(statusCode)) {
      this.discarding = true; // read and drop the body so the connection stays reusable
      return;
    }
    const listed = connectionListed(headers.connection);
    const out: [string, string][] = [];
    let length: string | undefined;
    for (const k in headers) {
      const v = headers[k];
      if (v === undefined || HOP_BY_HOP.has(k) || (listed && listed.has(k))) continue;
      if (k === 'date') continue; // uWS writes its own
      if (k === 'content-length') {
        length = v as string;
        continue; // uWS writes its own framing
      }
      if (Array.isArray(v)) for (const x of v) out.push([k, x]);
      else out.push([k, v]);
    }
    this.total = length !== undefined ? Number(length) : null;
    this.bodyless = this.ex.method === 'HEAD' || NO_BODY_STATUS.has(statusCode);
    if (this.flow) this.flow.status = statusCode;
    if (this.flow?.collectors && !this.bodyless && this.total !== null && this.total <= this.flow.collectLimit) {
      this.gathering = { status: statusCode, headers: out, chunks: [] };
      return;
    }
    if (this.flow?.hasResponseHooks) {
      const head = { status: statusCode, headers: out };
      this.flow.applyResponseHooks(head);
      this.flow.status = head.status;
      this.ex.writeHead(head.status, head.status === statusCode ? statusMessage : undefined, head.headers);
      return;
    }
    this.ex.writeHead(statusCode, statusMessage, out);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.discarding || this.bodyless || this.ex.aborted) return;
    if (this.gathering) return void this.gathering.chunks.push(chunk); // bounded by collectLimit
    if (!this.ex.write(chunk, this.total, () => controller.resume())) controller.pause();
  }

  onResponseEnd(): void {
    if (this.discarding) return this.retryNow();
    if (this.gathering) {
      const g = this.gathering;
      const a = this.flow!.collected({ status: g.status, headers: g.headers, body: Buffer.concat(g.chunks) });
      const head = { status: a.status, headers: a.headers };
      this.flow!.applyResponseHooks(head);
      this.flow!.status = head.status;
      this.ex.sendHead(head.status, a.body, head.headers);
      return this.finish();
    }
    if (this.bodyless) this.ex.endWithoutBody(this.total ?? undefined);
    else this.ex.end(); // no-op when the last tryEnd already completed a known length
    this.finish();
  }

  onResponseError(_c: Dispatcher.DispatchController | null, err: Error): void {
    if (this.again && !this.ex.aborted && !this.ex.headersSent && (this.discarding || retriable(err))) return this.retryNow();
    if (!this.ex.aborted && !this.ex.done) {
      if (this.ex.headersSent) this.ex.close();
      else {
        const code = this.flow?.bodyTooLarge ? 'Svc.Data.TooLarge' : errorCode(err);
        if (this.flow) this.flow.status = ERRORS[code].status;
        this.ex.sendJson(ERRORS[code].status, { code, message: ERRORS[code].message, traceId: this.traceId() });
      }
    }
    this.finish();
  }

  private retryNow(): void {
    if (this.ex.aborted) return this.finish();
    this.again!.next();
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.done();
  }
}

/** Failures before any answer byte: another attempt may succeed. */
function retriable(err: Error): boolean {
  const code = (err as { code?: string }).code ?? '';
  return ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_SOCKET', 'UND_ERR_HEADERS_TIMEOUT'].includes(code);
}

function errorCode(err: Error): ErrorCode {
  const code = (err as { code?: string }).code;
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return 'Svc.Data.UpstreamTimeout';
  return 'Svc.Data.UpstreamUnreachable';
}
