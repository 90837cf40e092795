import { errors, type Dispatcher } from 'undici';

/** The code of the error a request fails with when it gets no connection in time (or no place in the queue). */
export const UPSTREAM_BUSY = 'SY_UPSTREAM_BUSY';

/** The pool refused a request for want of a connection: nothing was sent (503 Svc.Data.UpstreamBusy). */
export class UpstreamBusyError extends Error {
  override readonly name = 'UpstreamBusyError';
  readonly code = UPSTREAM_BUSY;
}

/** A request waiting for a connection; `handler` is null once it left the queue (sent, refused or aborted). */
export interface Waiting {
  opts: Dispatcher.DispatchOptions;
  handler: Dispatcher.DispatchHandler | null;
  at: number;
}

/** The least time between two sweeps, so entries a few ms apart expire together. */
const SWEEP_MIN_MS = 10;

/**
 * The requests waiting for a connection of one TargetPool: first in, first out, at most
 * `max` of them (one more is refused at once), each for at most `timeoutMs` (0: no limit),
 * then refused with UPSTREAM_BUSY. The deadline costs no timer per request: one sweep timer
 * runs while requests wait, due when the head (the oldest) expires. O(1) per operation: an
 * aborted entry stays in place, skipped, until it reaches the head.
 */
export class PendingQueue {
  /** Entries before `head` are gone. */
  private queue: (Waiting | undefined)[] = [];
  private head = 0;
  /** Live entries (aborted ones not counted). */
  private live = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly max: number,
    private readonly timeoutMs: number,
    /** The pool's connection limit, for the refusal's message. */
    private readonly connections: number,
  ) {}

  get size(): number {
    return this.live;
  }

  /** Queues the request, or refuses it at once when `max` already wait. */
  add(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): void {
    if (this.live >= this.max) return fail(opts, handler, busy(`all ${this.connections} connections are busy and ${this.max} requests wait`));
    const w: Waiting = { opts, handler, at: performance.now() };
    this.queue.push(w);
    this.live++;
    if (this.timer === null && this.timeoutMs > 0) this.timer = setTimeout(this.sweep, this.timeoutMs);
    // A handler can abort while it waits (the client left, a step's deadline): the abort
    // takes it out of the queue now. undici calls onConnect again once the request is sent.
    const h = handler as { onConnect?: (abort: (err?: Error) => void) => void };
    if (typeof h.onConnect === 'function') h.onConnect((err) => this.cancel(w, err));
  }

  /** The oldest waiting request, out of the queue (its handler the caller's to use); undefined when none waits. */
  take(): { opts: Dispatcher.DispatchOptions; handler: Dispatcher.DispatchHandler } | undefined {
    const q = this.queue;
    while (this.head < q.length) {
      const w = q[this.head]!;
      q[this.head++] = undefined;
      const handler = w.handler;
      if (handler === null) continue;
      w.handler = null;
      this.live--;
      this.compact();
      return { opts: w.opts, handler };
    }
    this.compact();
    return undefined;
  }

  /** Empties the queue, handing each waiting request to `refuse` (the pool is closing). */
  clear(refuse: (opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler) => void): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    for (let w = this.take(); w !== undefined; w = this.take()) refuse(w.opts, w.handler);
  }

  private cancel(w: Waiting, err: Error | undefined): void {
    const h = w.handler;
    if (h === null) return; // already sent or refused: undici's own abort applies
    w.handler = null;
    this.live--;
    fail(w.opts, h, err ?? new errors.RequestAbortedError('request aborted'));
  }

  /** Drops the consumed front: at once when the queue is empty, else once it is most of the array (amortised O(1)). */
  private compact(): void {
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }

  /** Refuses the entries that waited timeoutMs, oldest first, and sets the timer for the next head. */
  private readonly sweep = (): void => {
    this.timer = null;
    const now = performance.now();
    const limit = now - this.timeoutMs;
    const q = this.queue;
    let expired: Waiting[] | null = null;
    while (this.head < q.length) {
      const w = q[this.head]!;
      if (w.handler !== null && w.at > limit) break;
      q[this.head++] = undefined;
      if (w.handler !== null) {
        this.live--;
        (expired ??= []).push(w);
      }
    }
    this.compact();
    if (this.head < q.length) this.timer = setTimeout(this.sweep, Math.max(q[this.head]!.at - limit, SWEEP_MIN_MS));
    // After the timer is set: a refused request's handler may dispatch again at once.
    if (expired === null) return;
    const err = busy(`no connection freed up within ${this.timeoutMs} ms`);
    for (const w of expired) {
      const h = w.handler!;
      w.handler = null;
      fail(w.opts, h, err);
    }
  };
}

function busy(message: string): Error {
  return new UpstreamBusyError(message);
}

/** What undici does for a request that fails before it is sent: the body is released and the handler told. */
export function fail(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler, err: Error): void {
  const body = opts.body as { destroy?: (err?: Error) => void } | null | undefined;
  if (body != null && typeof body.destroy === 'function') body.destroy();
  const h = handler as { onError?: (err: Error) => void; onResponseError?: (controller: unknown, err: Error) => void };
  if (typeof h.onError === 'function') h.onError(err);
  else h.onResponseError?.(NO_CONTROLLER, err); // a handler of undici's newer interface (mirror's)
}

const NO_CONTROLLER = { abort() {}, pause() {}, resume() {}, aborted: true, paused: false, reason: null };
