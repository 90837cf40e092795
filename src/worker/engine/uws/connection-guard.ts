import type { DataPortLimits } from '../../../contracts/ipc.js';
import { replyStatic } from './fixed-reply.js';
import type { LimitEvents } from '../../limit-events.js';
import type { StaticReply } from '../../response-head.js';
import type { HttpResponse, TemplatedApp } from './uws.js';

/** A new connection that has not been seen to send a request yet. */
interface Candidate {
  readonly res: HttpResponse;
  readonly key: string;
  closed: boolean;
  /** Still a candidate: neither a request from its address nor its deadline has come. */
  waiting: boolean;
}

const addressKey = (res: HttpResponse): string => Buffer.from(res.getRemoteAddress()).toString('latin1');

/**
 * The connection limits uWS leaves to the application, through its per-connection filter:
 * the per-worker connection cap (503 and close at once) and the first head's deadline
 * (408 and close). uWS does not tell which connection a request arrived on, so a new
 * connection stays a candidate for the 408 only until a request comes from its address;
 * one still a candidate at its deadline never sent a request, and only such a connection is
 * ever written to. The others are left to uWS's idle timer (limits.idleTimeoutS). Requests
 * pay for the address check only while candidates exist: a new connection is one until its
 * first request, a slow client's until its deadline.
 */
export class ConnectionGuard {
  open = 0;
  /** Connections waiting for their first request: requests are matched by address only while there are any. */
  candidates = 0;
  private readonly byAddress = new Map<string, Set<Candidate>>();

  constructor(
    private readonly limits: DataPortLimits,
    private readonly events: LimitEvents,
    private readonly refusal: (code: 'Svc.Data.TooManyConnections' | 'Svc.Data.HeadTimeout') => StaticReply,
  ) {}

  attach(app: TemplatedApp): void {
    app.filter((res, change) => {
      if ((change as number) < 0) this.open--;
      else this.opened(res);
    });
  }

  /** From the request callback, while candidates > 0: this request may be any waiting connection's from its address. */
  requestFrom(res: HttpResponse): void {
    const waiting = this.byAddress.get(addressKey(res));
    if (waiting) for (const c of waiting) this.settle(c);
  }

  private opened(res: HttpResponse): void {
    if (++this.open > this.limits.maxConnections) {
      this.events.hit('maxConnections', { open: this.open - 1 });
      refuse(res, this.refusal('Svc.Data.TooManyConnections'));
      return;
    }
    const conn: Candidate = { res, key: addressKey(res), closed: false, waiting: true };
    let set = this.byAddress.get(conn.key);
    if (!set) this.byAddress.set(conn.key, (set = new Set()));
    set.add(conn);
    this.candidates++;
    // Replaced by a request's own handler once one starts; until then it tells a close.
    res.onAborted(() => {
      conn.closed = true;
      this.settle(conn);
    });
    setTimeout(() => this.deadline(conn), this.limits.headerTimeoutMs).unref();
  }

  private settle(conn: Candidate): void {
    if (!conn.waiting) return;
    conn.waiting = false;
    this.candidates--;
    const set = this.byAddress.get(conn.key)!;
    set.delete(conn);
    if (set.size === 0) this.byAddress.delete(conn.key);
  }

  private deadline(conn: Candidate): void {
    if (!conn.waiting) return;
    this.settle(conn);
    if (conn.closed) return;
    this.events.hit('headerTimeout', { timeoutMs: this.limits.headerTimeoutMs });
    refuse(conn.res, this.refusal('Svc.Data.HeadTimeout'));
  }
}

/** Answers a connection that has no request in flight, and closes it. */
function refuse(res: HttpResponse, r: StaticReply): void {
  res.cork(() => replyStatic(res, r, true, false));
}
