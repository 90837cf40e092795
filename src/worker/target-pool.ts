import { Client, type Dispatcher } from 'undici';
import type { Upstream } from '../contracts/upstream.js';
import { PendingQueue } from './pending-queue.js';

export interface TargetPoolOptions {
  /** Connections at most; requests beyond wait in arrival order for one to free up. */
  connections: number;
  /** Requests that may wait for a connection; one more is refused at once (UPSTREAM_BUSY). Default: no bound. */
  maxPending?: number;
  /** How long a request may wait for a connection before it is refused (UPSTREAM_BUSY). Default: no limit. */
  pendingTimeoutMs?: number;
  client: Client.Options;
  /** https: the servername every request carries (else undici takes it from the Host header; upstream-connect.ts). */
  servername?: string;
  /** A connection to the target could not be made (refused, timed out, unreachable). */
  onConnectError?: () => void;
}

/**
 * A handler told which connection its request goes on, just before it is handed over
 * (the proxy's, to re-send on a new connection). `reused`: the connection carried an
 * earlier request, so the upstream may have closed it since. The connection stays taken
 * for the request until undici frees it, also from inside the handler's onError: a
 * request dispatched on it there gets a new socket of that connection. (An HTTP/2 pool
 * names itself: a re-send there goes on a live session or a new one.)
 */
export interface ConnectionAware {
  onConnection(conn: Upstream, reused: boolean): void;
}

/**
 * Keep-alive connections to one upstream target: one undici Client per connection
 * (pipelining 1), the idle ones on a stack. A request takes the most recently freed
 * connection in O(1), and the client goes back on the stack at its 'drain'.
 *
 * With every connection busy, a request waits in a FIFO queue (pending-queue.ts) of at
 * most `maxPending`, for at most `pendingTimeoutMs`; past either it fails with UPSTREAM_BUSY.
 *
 * Not undici's Pool: it keeps a client marked busy after a request undici refused before
 * queueing it (a header value with a DEL byte, which uWS lets through); here such a
 * client goes straight back on the stack.
 */
export class TargetPool implements Upstream {
  private readonly idle: Client[] = [];
  private readonly clients: Client[] = [];
  private readonly pending: PendingQueue;
  /** Clients whose socket is up (between undici's 'connect' and 'disconnect'). */
  private readonly connected = new Set<Client>();
  private closed = false;

  constructor(
    private readonly origin: string,
    private readonly options: TargetPoolOptions,
  ) {
    this.pending = new PendingQueue(options.maxPending ?? Infinity, options.pendingTimeoutMs ?? 0, options.connections);
  }

  dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    if (this.closed) {
      this.refuse(opts, handler);
      return false;
    }
    const c = this.idle.pop() ?? this.grow();
    if (c === undefined) {
      this.pending.add(opts, handler);
      return false;
    }
    if (this.send(c, opts, handler)) this.idle.push(c);
    return true;
  }

  /** Closes every connection once its request is done; requests still waiting fail as on a closed client. */
  async close(): Promise<void> {
    this.closed = true;
    const all = this.clients.map((c) => c.close().catch(() => undefined));
    this.pending.clear((opts, handler) => this.refuse(opts, handler));
    await Promise.all(all);
  }

  /** A closed client refuses with ClientClosedError, through whichever error callback the handler has. */
  private refuse(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): void {
    const c = this.clients[0] ?? new Client(this.origin);
    if (!c.closed) void c.close();
    c.dispatch(opts, handler);
  }

  /** The number of connections made so far (tests). */
  get size(): number {
    return this.clients.length;
  }

  /** Requests in flight or waiting: connections in use (one request each) and the queue. */
  get busy(): number {
    return this.clients.length - this.idle.length + this.pending.size;
  }

  /** Requests waiting for a connection (tests). */
  get waiting(): number {
    return this.pending.size;
  }

  /** Dispatches on a free client; true when it is still free afterwards. */
  private send(c: Client, opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    // A client connects only for a request: one already connected has carried one before.
    (handler as Partial<ConnectionAware>).onConnection?.(c, this.connected.has(c));
    const sni = this.options.servername;
    // `servername` is read by undici's Request though its types do not list it.
    if (c.dispatch(sni === undefined ? opts : ({ ...opts, servername: sni } as Dispatcher.DispatchOptions), handler)) return true;
    // false means busy until 'drain', unless undici refused the request before queueing
    // it (its argument checks, reported through the handler): then nothing is queued and
    // no 'drain' will come, so the client is free now.
    return c.stats.size === 0;
  }

  private grow(): Client | undefined {
    if (this.closed || this.clients.length >= this.options.connections) return undefined;
    const c = new Client(this.origin, this.options.client);
    c.on('drain', () => this.freed(c));
    c.on('connect', () => this.connected.add(c)).on('disconnect', () => this.connected.delete(c));
    if (this.options.onConnectError) c.on('connectionError', this.options.onConnectError);
    this.clients.push(c);
    return c;
  }

  /** A client finished its request: the next waiting request takes it, else it goes back on the stack. */
  private freed(c: Client): void {
    for (let w = this.pending.take(); w !== undefined; w = this.pending.take()) {
      if (!this.send(c, w.opts, w.handler)) return;
    }
    if (!this.closed) this.idle.push(c);
  }
}

