import type { Dispatcher } from 'undici';
import type { Readable } from 'node:stream';
import type { IncomingHttpHeaders } from 'node:http';
import type { Exchange } from './exchange.js';
import type { ClusterPools } from './upstream-pools.js';
import { HOP_BY_HOP, connectionListed } from '../shared/hop-by-hop.js';
import { ERRORS, type ErrorCode } from '../shared/errors.js';
import type { RequestFlow } from './flow.js';

const NO_BODY_STATUS = new Set([204, 304]);

/**
 * The proxy stage: always last, no settings. Path and query reach the upstream byte
 * for byte; hop-by-hop headers are dropped both ways; X-Forwarded-* are set; both
 * bodies stream with backpressure (client socket paused while the upstream is slow to
 * take the body, upstream paused while the client is slow to read the response).
 */
/** `flow` is null on routes without steps: the request goes out exactly as it came. */
export function proxy(ex: Exchange, pools: ClusterPools, body: Readable | null, flow: RequestFlow | null, traceId: () => string, done: () => void): void {
  if (ex.aborted) {
    body?.destroy();
    return done();
  }
  const spec = pools.spec;
  const retry = body === null ? (flow?.retry ?? null) : null; // a streamed body cannot be replayed
  let current: ProxyHandler | null = null;
  ex.onAbort(() => current?.clientAborted());
  const attempt = (n: number): void => {
    if (ex.aborted) return; // the previous attempt's handler already finished on the abort
    const again =
      retry !== null && n < retry.attempts
        ? { statuses: retry.statuses, next: () => void setTimeout(() => attempt(n + 1), retry.backoffMs * 2 ** (n - 1)) }
        : null;
    const handler = new ProxyHandler(ex, flow, traceId, done, again);
    current = handler;
    try {
      pools.pick().dispatch(
        {
          path: flow === null ? target(ex.url, ex.query) : target(flow.path, flow.query),
          method: ex.method as Dispatcher.HttpMethod,
          headers: upstreamHeaders(ex, flow === null ? null : flow.editPlan()),
          body,
          headersTimeout: flow?.timeouts?.headersMs ?? spec.headersMs,
          bodyTimeout: flow?.timeouts?.bodyMs ?? spec.bodyMs,
          // A request with a streamed body is not safe to replay on another connection.
          idempotent: body === null && (ex.method === 'GET' || ex.method === 'HEAD'),
        },
        handler,
      );
    } catch (err) {
      handler.onResponseError(null, err as Error);
    }
  };
  attempt(1);
}

function target(path: string, query: string | null): string {
  return query === null ? path : `${path}?${query}`;
}

/**
 * The client's headers as the upstream receives them, in one pass: hop-by-hop ones
 * dropped (also those named in Connection), X-Forwarded-* set, and the steps' header
 * edits applied (`plan`: names whose values are replaced, then the values to append).
 */
function upstreamHeaders(ex: Exchange, plan: { drop: string[]; tail: string[] } | null): string[] {
  const listed = connectionListed(ex.headerList('connection'));
  const drop = plan === null || plan.drop.length === 0 ? null : plan.drop;
  const h = ex.headers;
  const out: string[] = [];
  let xff: string | undefined;
  let host = '';
  for (let i = 0; i < h.length; i += 2) {
    const k = h[i]!;
    const v = h[i + 1]!;
    if (HOP_BY_HOP.has(k) || (listed && listed.has(k))) continue;
    if (k === 'x-forwarded-for') {
      xff = xff ? `${xff}, ${v}` : v;
      continue;
    }
    if (k === 'x-forwarded-proto' || k === 'x-forwarded-host') continue; // set by us, never trusted from the client
    if (k === 'expect') continue; // 100-continue is answered on the client side; undici refuses the header
    if (k === 'host') host = v;
    if (drop !== null && drop.includes(k)) continue;
    out.push(k, v);
  }
  if (drop === null || !drop.includes('x-forwarded-for')) out.push('x-forwarded-for', xff ? `${xff}, ${ex.remoteAddress}` : ex.remoteAddress);
  if (drop === null || !drop.includes('x-forwarded-proto')) out.push('x-forwarded-proto', 'http');
  if (host && (drop === null || !drop.includes('x-forwarded-host'))) out.push('x-forwarded-host', host);
  if (plan !== null) for (let i = 0; i < plan.tail.length; i++) out.push(plan.tail[i]!);
  return out;
}

class ProxyHandler implements Dispatcher.DispatchHandler {
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
