import { Client, type Dispatcher } from 'undici';

/** What the proxy, `mirror` and the service-calling steps send through: undici's dispatch. */
export interface Upstream {
  dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean;
}

/**
 * undici refused the request before sending it (its argument checks: a header value, the
 * path or the method holds a byte HTTP does not allow). The client's bytes are at fault,
 * not the upstream, and no connection was used.
 */
export function refusedBeforeSending(err: unknown): boolean {
  return (err as { code?: string } | null)?.code === 'UND_ERR_INVALID_ARG';
}

/** The code of the error a pool fails a request with when it gets no connection in time (or no place in the queue). */
export const UPSTREAM_BUSY = 'SY_UPSTREAM_BUSY';

/** The pool refused the request for want of a connection: nothing was sent. */
export function upstreamBusy(err: unknown): boolean {
  return (err as { code?: string } | null)?.code === UPSTREAM_BUSY;
}

export interface TargetPoolOptions {
  /** Connections at most; requests beyond wait in arrival order for one to free up. */
  connections: number;
  /** Requests that may wait for a connection; one more is refused at once (UPSTREAM_BUSY). Default: no bound. */
  maxPending?: number;
  /** How long a request may wait for a connection before it is refused (UPSTREAM_BUSY). Default: no limit. */
  pendingTimeoutMs?: number;
  client: Client.Options;
}

/** A request waiting for a connection; `handler` is null once it left the queue (sent, refused or aborted). */
interface Waiting {
  opts: Dispatcher.DispatchOptions;
  handler: Dispatcher.DispatchHandler | null;
  at: number;
}

/** The least time between two sweeps of the queue, so entries a few ms apart expire together. */
const SWEEP_MIN_MS = 10;

/**
 * Keep-alive connections to one upstream target: one undici Client per connection
 * (pipelining 1), the idle ones on a stack. A request takes the most recently freed
 * connection in O(1), and the client goes back on the stack at its 'drain'.
 *
 * With every connection busy, a request waits in a FIFO queue of at most `maxPending`
 * for at most `pendingTimeoutMs`; past either it fails at once with UPSTREAM_BUSY. The
 * deadline costs no timer per request: one sweep timer per pool runs while the queue
 * holds requests, due when its head (the oldest) expires.
 *
 * Why not undici's Pool: a request that undici refuses before queueing it (a header
 * value with a DEL byte, which uWS lets through) left the Pool's client marked busy for
 * good, so 256 such requests and the cluster stopped answering. Here such a client goes
 * straight back on the stack. (Pool also scans its clients for a free one twice a
 * request; the stack saved no CPU measurable on this machine, though.)
 */
export class TargetPool implements Upstream {
  private readonly idle: Client[] = [];
  private readonly clients: Client[] = [];
  /** The queue: entries before `head` are gone; aborted entries stay (handler null) until they reach the head. */
  private queue: (Waiting | undefined)[] = [];
  private head = 0;
  /** Live entries in the queue (aborted ones not counted). */
  private pending = 0;
  private sweepTimer: NodeJS.Timeout | null = null;
  private readonly maxPending: number;
  private readonly pendingTimeoutMs: number;
  private closed = false;

  constructor(
    private readonly origin: string,
    private readonly options: TargetPoolOptions,
  ) {
    this.maxPending = options.maxPending ?? Infinity;
    this.pendingTimeoutMs = options.pendingTimeoutMs ?? 0;
  }

  dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    if (this.closed) {
      this.refuse(opts, handler);
      return false;
    }
    const c = this.idle.pop() ?? this.grow();
    if (c === undefined) {
      this.enqueue(opts, handler);
      return false;
    }
    if (this.send(c, opts, handler)) this.idle.push(c);
    return true;
  }

  /** Closes every connection once its request is done; requests still waiting fail as on a closed client. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.sweepTimer !== null) clearTimeout(this.sweepTimer);
    this.sweepTimer = null;
    const all = this.clients.map((c) => c.close().catch(() => undefined));
    const waiting = this.queue.slice(this.head);
    this.queue = [];
    this.head = 0;
    this.pending = 0;
    for (const w of waiting) {
      const h = w?.handler;
      if (!h) continue;
      w.handler = null;
      this.refuse(w.opts, h);
    }
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

  /** Requests waiting for a connection (tests). */
  get waiting(): number {
    return this.pending;
  }

  /** Dispatches on a free client; true when it is still free afterwards. */
  private send(c: Client, opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    if (c.dispatch(opts, handler)) return true;
    // false means busy until 'drain', unless undici refused the request before queueing
    // it (its argument checks, reported through the handler): then nothing is queued and
    // no 'drain' will come, so the client is free now.
    return c.stats.size === 0;
  }

  private grow(): Client | undefined {
    if (this.closed || this.clients.length >= this.options.connections) return undefined;
    const c = new Client(this.origin, this.options.client);
    c.on('drain', () => this.freed(c));
    this.clients.push(c);
    return c;
  }

  private enqueue(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): void {
    if (this.pending >= this.maxPending) return fail(opts, handler, busy(`all ${this.options.connections} connections are busy and ${this.maxPending} requests wait`));
    const w: Waiting = { opts, handler, at: performance.now() };
    this.queue.push(w);
    this.pending++;
    if (this.sweepTimer === null && this.pendingTimeoutMs > 0) this.sweepTimer = setTimeout(this.sweep, this.pendingTimeoutMs);
    // A handler can abort while it waits (the client left, a step's deadline): the abort
    // takes it out of the queue now. undici calls onConnect again once the request is sent.
    const h = handler as { onConnect?: (abort: (err?: Error) => void) => void };
    if (typeof h.onConnect === 'function') h.onConnect((err) => this.cancel(w, err));
  }

  private cancel(w: Waiting, err: Error | undefined): void {
    const h = w.handler;
    if (h === null) return; // already sent or refused: undici's own abort applies
    w.handler = null;
    this.pending--;
    fail(w.opts, h, err ?? Object.assign(new Error('request aborted'), { code: 'UND_ERR_ABORTED' }));
  }

  /** The next live entry, taken out of the queue; undefined when none waits. */
  private take(): Waiting | undefined {
    const q = this.queue;
    while (this.head < q.length) {
      const w = q[this.head]!;
      q[this.head++] = undefined;
      if (w.handler !== null) {
        this.pending--;
        this.compact();
        return w;
      }
    }
    this.compact();
    return undefined;
  }

  /** Drops the consumed front of the queue: at once when it is empty, else once it is most of the array (amortised O(1)). */
  private compact(): void {
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }

  /** Refuses the entries that waited pendingTimeoutMs, oldest first, and sets the timer for the next head. */
  private readonly sweep = (): void => {
    this.sweepTimer = null;
    if (this.closed) return;
    const now = performance.now();
    const limit = now - this.pendingTimeoutMs;
    const q = this.queue;
    let expired: Waiting[] | null = null;
    while (this.head < q.length) {
      const w = q[this.head]!;
      if (w.handler !== null && w.at > limit) break;
      q[this.head++] = undefined;
      if (w.handler !== null) {
        this.pending--;
        (expired ??= []).push(w);
      }
    }
    this.compact();
    if (this.head < q.length) this.sweepTimer = setTimeout(this.sweep, Math.max(q[this.head]!.at - limit, SWEEP_MIN_MS));
    // After the timer is set: a refused request's handler may dispatch again at once.
    if (expired === null) return;
    const err = busy(`no connection freed up within ${this.pendingTimeoutMs} ms`);
    for (const w of expired) {
      const h = w.handler!;
      w.handler = null;
      fail(w.opts, h, err);
    }
  };

  /** A client finished its request: the next waiting request takes it, else it goes back on the stack. */
  private freed(c: Client): void {
    for (let w = this.take(); w !== undefined; w = this.take()) {
      const h = w.handler!;
      w.handler = null;
      if (!this.send(c, w.opts, h)) return;
    }
    if (!this.closed) this.idle.push(c);
  }
}

function busy(message: string): Error {
  return Object.assign(new Error(message), { code: UPSTREAM_BUSY });
}

/** What undici does for a request that fails before it is sent: the body is released and the handler told. */
function fail(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler, err: Error): void {
  const body = opts.body as { destroy?: (err?: Error) => void } | null | undefined;
  if (body != null && typeof body.destroy === 'function' && !Buffer.isBuffer(body)) body.destroy();
  const h = handler as { onError?: (err: Error) => void; onResponseError?: (controller: unknown, err: Error) => void };
  if (typeof h.onError === 'function') h.onError(err);
  else h.onResponseError?.(NO_CONTROLLER, err); // a handler of undici's newer interface (mirror's)
}

const NO_CONTROLLER = { abort() {}, pause() {}, resume() {}, aborted: true, paused: false, reason: null };
