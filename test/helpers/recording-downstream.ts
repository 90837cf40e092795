import type { Downstream, IdEcho, RequestHead, ResponseHead, ResponseSink, Trailers, WebSocketPeer } from '../../src/worker/engine/contract.js';
import type { StaticReply } from '../../src/worker/response-head.js';
import { Exchange } from '../../src/worker/exchange.js';
import { TrustedProxies } from '../../src/worker/trusted-proxies.js';
import { LimitEvents } from '../../src/worker/limit-events.js';
import { LIMIT_DEFAULTS } from '../../src/shared/gateway-config-limits.js';
import { createLogger } from '../../src/shared/logger.js';

/**
 * An engine's downstream that records what the client got, one line a step:
 * `head <status>`, `body <text>`, `end`, `close`. `accepting` false: a write that does not
 * complete its body reports backpressure. `leave()`: the client goes away, as an engine tells it.
 */
export class RecordingDownstream implements Downstream {
  readonly got: string[] = [];
  /** Every head written, whole; and the trailers end() was given. */
  readonly heads: ResponseHead[] = [];
  trailers: Trailers | null = null;
  accepting = true;
  private abortCb: (() => void) | null = null;
  private gone = false;
  private sent = 0;

  remoteAddress(): string {
    return this.gone ? '' : '127.0.0.1';
  }
  clientCertificate(): null {
    return null;
  }
  onAborted(cb: () => void): void {
    this.abortCb = cb;
  }
  onData(): void {}
  pause(): void {}
  resume(): void {}

  reply(head: ResponseHead, _id: IdEcho, body: string | Buffer | null, _length: number | undefined, _close: boolean, sink: ResponseSink): void {
    this.heads.push(head);
    this.got.push(`head ${head.status}`);
    if (body !== null) this.got.push(`body ${body.toString()}`);
    this.done('end');
    sink.responseCompleted();
  }

  replyStatic(r: StaticReply): void {
    this.got.push(`head ${r.status}`, `body ${r.body}`);
    this.done('end');
  }

  write(head: ResponseHead | null, _id: IdEcho, chunk: Buffer, total: number | null, _close: boolean, _onDrain: () => void, sink: ResponseSink): boolean {
    if (head !== null) this.head(head);
    this.got.push(`body ${chunk.length}/${total}`);
    this.sent += chunk.length;
    if (total !== null && this.sent >= total) {
      this.done('end');
      sink.responseCompleted();
      return true;
    }
    return this.accepting;
  }

  end(head: ResponseHead | null, _id: IdEcho, _close: boolean, trailers?: Trailers | null): boolean {
    if (head !== null) this.head(head);
    this.trailers = trailers ?? null;
    this.done('end');
    return true;
  }

  close(): void {
    this.got.push('close');
    this.leave();
  }

  upgrade(_peer: WebSocketPeer): boolean {
    return false;
  }

  /** The client went away before the response ended. */
  leave(): void {
    if (this.gone) return;
    this.gone = true;
    this.abortCb?.();
  }

  private head(head: ResponseHead): void {
    this.heads.push(head);
    this.got.push(`head ${head.status}`);
  }

  private done(line: string): void {
    this.got.push(line);
    this.gone = true;
  }
}

/** A GET of `/x` from 127.0.0.1 with Host example.test. */
const HEAD: RequestHead = {
  getCaseSensitiveMethod: () => 'GET',
  getUrl: () => '/x',
  getQuery: () => undefined,
  getHeader: (name) => (name === 'host' ? 'example.test' : ''),
  forEach: (cb) => cb('host', 'example.test'),
};

/** A request head of `method` with Host example.test and `headers` besides. */
function requestHead(method: string, headers: [string, string][]): RequestHead {
  const all: [string, string][] = [['host', 'example.test'], ...headers];
  return {
    getCaseSensitiveMethod: () => method,
    getUrl: () => '/x',
    getQuery: () => undefined,
    getHeader: (name) => all.find(([k]) => k === name)?.[1] ?? '',
    forEach: (cb) => all.forEach(([k, v]) => cb(k, v)),
  };
}

/** A real Exchange over a RecordingDownstream, as the data server makes one (a GET of /x, or `method` with `headers`). */
export function recordedExchange(opts: { method?: string; headers?: [string, string][] } = {}): { ex: Exchange; down: RecordingDownstream } {
  const down = new RecordingDownstream();
  const method = opts.method ?? 'GET';
  const head = opts.headers === undefined && method === 'GET' ? HEAD : requestHead(method, opts.headers ?? []);
  const ex = new Exchange(down, head, method, '/x', () => false, () => {}, new TrustedProxies([]), '8080', LIMIT_DEFAULTS, new LimitEvents(createLogger('silent')));
  return { ex, down };
}
