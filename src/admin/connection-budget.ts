import type { Server, IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../shared/logger.js';
import { admitCap, countOpenDescriptors, readOpenFilesLimit } from './descriptor-room.js';
import { refuseAndClose } from './connection-guard.js';
import { headDeadlineMs } from './head-deadline.js';
import { ConnectionStates } from './eviction-order.js';
import { ShedReport } from './shed-report.js';

const SWEEP_MS = 250;
/** The descriptor limit is read again after this long or this many new connections; the count (up to ms) at most this often. */
const REFRESH_MS = 1_000;
const REFRESH_EVERY = 32;

/** A connection budget attached to a server; closed with it. */
export interface ConnectionBudget {
  /** The call on `socket` authenticated: the connection is among the last to be closed at the cap. */
  authenticated(socket: Socket): void;
  close(): void;
}

/**
 * Counts every admin connection against one cap below the process's descriptor limit
 * (`admitCap`), so an accept never fails for want of a descriptor: libuv answers EMFILE
 * by accepting and closing every queued connection, the operator's too, and node reports
 * nothing. node:http's own `maxConnections` would drop the newest connection, which is
 * the operator's during a flood; here a new connection over the cap closes the one least
 * likely to be an operator's (`ConnectionStates.victim`), or gets 503 when every other is
 * in a call being handled. Heads get less time as the cap nears (`headDeadlineMs`).
 * Keep-alive connections are not cut by the head deadline between requests (node's
 * keepAliveTimeout bounds them), only evicted at the cap.
 */
export function attachConnectionBudget(server: Server, max: number, headTimeoutMs: number, log: Logger): ConnectionBudget {
  const budget = new Budget(max, headTimeoutMs, new ShedReport(log));
  server.on('connection', (socket: Socket) => budget.admit(socket));
  server.on('request', (req: IncomingMessage, res: ServerResponse) => budget.inCall(req.socket, res));
  return { authenticated: (socket) => budget.authenticated(socket), close: () => budget.close() };
}

class Budget {
  private readonly states = new ConnectionStates<Socket>();
  private open = 0;
  /** Connections closed by this budget whose descriptor is not released yet. */
  private leaving = 0;
  private cap: number;
  private refreshedAt = 0;
  private countedAt = -Infinity;
  /** Descriptors open that are not admin connections, at the last count. */
  private others = 0;
  private openAtRefresh = 0;
  private sweeper: NodeJS.Timeout | null = null;

  constructor(
    private readonly max: number,
    private readonly headTimeoutMs: number,
    private readonly shed: ShedReport,
  ) {
    this.cap = max;
    this.refresh(Date.now());
  }

  admit(socket: Socket): void {
    const now = Date.now();
    this.open++;
    if (socket.writableEnded) {
      // Refused already (the per-address cap): its descriptor goes as soon as its answer is out.
      this.leaving++;
      socket.once('close', () => (this.open--, this.leaving--));
      return;
    }
    this.states.opened(socket, now);
    socket.once('close', () => {
      this.open--;
      if (!this.states.remove(socket)) this.leaving--;
    });
    if (now - this.refreshedAt >= REFRESH_MS || this.open >= this.openAtRefresh + REFRESH_EVERY) this.refresh(now);
    if (this.live() > this.cap && !this.evictOne(socket, now)) {
      this.drop(socket, 'Svc.Request.AdminFull');
      this.shed.counts.refused++;
    }
    this.sweeper ??= setInterval(() => this.sweep(), SWEEP_MS).unref();
  }

  inCall(socket: Socket, res: ServerResponse): void {
    if (!this.states.called(socket, res, Date.now())) return; // closed by us
    res.once('finish', () => !socket.destroyed && this.states.answered(socket, res, Date.now()));
  }

  authenticated(socket: Socket): void {
    this.states.prove(socket);
  }

  close(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
  }

  private live(): number {
    return this.open - this.leaving;
  }

  /** Reads the descriptor limit and count again; a lowered limit sheds connections down to the new cap. */
  private refresh(now: number): void {
    this.refreshedAt = now;
    this.openAtRefresh = this.open;
    if (now - this.countedAt >= REFRESH_MS) {
      this.countedAt = now;
      const n = countOpenDescriptors();
      if (n !== null) this.others = Math.max(0, n - this.open);
    }
    this.cap = admitCap(this.max, readOpenFilesLimit(), this.others);
    while (this.live() > this.cap && this.evictOne(null, now)) continue;
  }

  /** Closes the connection least likely to be an operator's; false when every other one is in a call being handled. */
  private evictOne(spare: Socket | null, now: number): boolean {
    const victim = this.states.victim(now, spare);
    if (victim === null) return false;
    // An answer still being written: a 408 after part of it would corrupt it, so the connection is only cut.
    this.drop(victim.key, victim.answered ? null : 'Svc.Request.Timeout');
    this.shed.counts.evicted++;
    return true;
  }

  /** Answers `code` (null: none) and closes at once (no linger: the descriptor is what is short). */
  private drop(socket: Socket, code: 'Svc.Request.Timeout' | 'Svc.Request.AdminFull' | null): void {
    if (!this.states.remove(socket)) return;
    this.leaving++;
    if (code === null || socket.writableEnded || socket.destroyed) socket.destroy();
    else refuseAndClose(socket, code, false);
  }

  /** Closes headless connections past the deadline of the current load. */
  private sweep(): void {
    const now = Date.now();
    if (now - this.refreshedAt >= REFRESH_MS) this.refresh(now);
    const deadline = headDeadlineMs(this.live() / this.cap, this.headTimeoutMs);
    for (const socket of [...this.states.headlessSince(now - deadline)]) {
      this.drop(socket, 'Svc.Request.Timeout');
      if (deadline < this.headTimeoutMs) this.shed.counts.timedOut++;
    }
    if (this.open === 0) this.close();
    this.shed.report(now, { open: this.live(), cap: this.cap, headDeadlineMs: deadline });
  }
}
