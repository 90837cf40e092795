import type { DataPortLimits } from '../contracts/ipc.js';
import { replyStatic } from './fixed-reply.js';
import type { LimitEvents } from './limit-events.js';
import type { StaticReply } from './response-head.js';
import type { HttpResponse, TemplatedApp } from './uws.js';

/** A connection still within its first head's deadline, and the address it came from. */
interface Young {
  readonly res: HttpResponse;
  readonly key: string;
  /** The request count when it opened: a request from its address since then may be its own. */
  readonly openedAt: number;
  closed: boolean;
}

interface AddressTally {
  young: number;
  /** The request count at the address's latest request. */
  lastRequest: number;
}

const addressKey = (res: HttpResponse): string => Buffer.from(res.getRemoteAddress()).toString('latin1');

/**
 * The connection limits uWS leaves to the application, through its per-connection filter:
 * the per-worker connection cap (503 and close at once) and the first head's deadline
 * (408 and close). uWS does not tell which connection a request arrived on, so a
 * connection is answered 408 only when no request came from its address since it opened:
 * then it never sent one. Otherwise it is left to uWS's idle timer, which closes it
 * silently (limits.idleTimeoutS).
 */
export class ConnectionGuard {
  open = 0;
  /** Connections within their header deadline: requests are tallied by address only while there are any. */
  young = 0;
  private requests = 0;
  private readonly addresses = new Map<string, AddressTally>();

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

  /** From the request callback, while young > 0: a request came from this connection's address. */
  requestFrom(res: HttpResponse): void {
    const tally = this.addresses.get(addressKey(res));
    if (tally) tally.lastRequest = this.requests;
    this.requests++;
  }

  private opened(res: HttpResponse): void {
    if (++this.open > this.limits.maxConnections) {
      this.events.hit('maxConnections', { open: this.open - 1 });
      refuse(res, this.refusal('Svc.Data.TooManyConnections'));
      return;
    }
    const key = addressKey(res);
    let tally = this.addresses.get(key);
    if (!tally) this.addresses.set(key, (tally = { young: 0, lastRequest: -1 }));
    tally.young++;
    this.young++;
    const conn: Young = { res, key, openedAt: this.requests, closed: false };
    // Replaced by the request's own handler once one starts: it fires only for a connection
    // that never sent a request, which is the only kind this guard ever writes to.
    res.onAborted(() => (conn.closed = true));
    setTimeout(() => this.deadline(conn), this.limits.headerTimeoutMs).unref();
  }

  private deadline(conn: Young): void {
    this.young--;
    const tally = this.addresses.get(conn.key)!;
    const silent = tally.lastRequest < conn.openedAt;
    if (--tally.young === 0) this.addresses.delete(conn.key);
    if (conn.closed || !silent) return;
    this.events.hit('headerTimeout', { timeoutMs: this.limits.headerTimeoutMs });
    refuse(conn.res, this.refusal('Svc.Data.HeadTimeout'));
  }
}

/** Answers a connection that has no request in flight, and closes it. */
function refuse(res: HttpResponse, r: StaticReply): void {
  res.cork(() => replyStatic(res, r, true, false));
}
