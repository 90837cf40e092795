import type { Server, IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../shared/logger.js';
import { admitCap, countOpenDescriptors, readOpenFilesLimit } from './descriptor-room.js';
import { refuseAndClose } from './connection-guard.js';
import { headDeadlineMs } from './head-deadline.js';

const SWEEP_MS = 250;
/** The descriptor limit is read again after this long or this many new connections; the count (up to ms) at most this often. */
const REFRESH_MS = 1_000;
const REFRESH_EVERY = 32;
const LOG_EVERY_MS = 10_000;

/**
 * Every admin connection counted against one cap below the process's descriptor limit
 * (`admitCap`), so an accept never fails for want of a descriptor: libuv answers EMFILE
 * by accepting and closing every queued connection, the operator's too, and node reports
 * nothing. node:http's own `maxConnections` would drop the newest connection, which is
 * the operator's during a flood; here a new connection over the cap closes, with 408, the
 * one least likely to be an operator: the oldest that has not completed a head, else the
 * oldest between requests or whose answer is written (a non-reader's), never a call being
 * handled. A client that sends its head at once is never the oldest headless connection,
 * however fast an attacker reconnects. Heads get less time as the cap nears
 * (`headDeadlineMs`). Keep-alive connections are not cut by the head deadline between
 * requests (node's keepAliveTimeout bounds them), only evicted at the cap.
 */
export class ConnectionBudget {
  /** Connections without a complete head yet, oldest first (a Map keeps insertion order). */
  private readonly headless = new Map<Socket, number>();
  /** Connections that completed a request and wait for the next, oldest first. */
  private readonly between = new Map<Socket, number>();
  /** Connections in a call, with its answer. */
  private readonly calls = new Map<Socket, ServerResponse>();
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
  private shed = { timedOut: 0, evicted: 0, refused: 0, loggedAt: 0 };

  constructor(
    server: Server,
    private readonly max: number,
    private readonly headTimeoutMs: number,
    private readonly log: Logger,
  ) {
    this.cap = max;
    this.refresh(Date.now());
    server.on('connection', (socket: Socket) => this.admit(socket));
    server.on('request', (req: IncomingMessage, res: ServerResponse) => this.inCall(req.socket, res));
    server.on('close', () => this.sweeper && clearInterval(this.sweeper));
  }

  private admit(socket: Socket): void {
    const now = Date.now();
    this.open++;
    if (socket.writableEnded) {
      // Refused already (the per-address cap): its descriptor goes as soon as its answer is out.
      this.leaving++;
      socket.once('close', () => (this.open--, this.leaving--));
      return;
    }
    this.headless.set(socket, now);
    socket.once('close', () => {
      this.open--;
      if (this.headless.delete(socket) || this.between.delete(socket) || this.calls.delete(socket)) return;
      this.leaving--;
    });
    if (now - this.refreshedAt >= REFRESH_MS || this.open >= this.openAtRefresh + REFRESH_EVERY) this.refresh(now);
    if (this.live() > this.cap && !this.evictOne(socket)) {
      this.drop(socket, 'Svc.Request.AdminFull');
      this.shed.refused++;
    }
    this.sweeper ??= setInterval(() => this.sweep(), SWEEP_MS).unref();
  }

  private inCall(socket: Socket, res: ServerResponse): void {
    if (!this.headless.delete(socket) && !this.between.delete(socket) && !this.calls.has(socket)) return; // closed by us
    this.calls.set(socket, res);
    res.once('finish', () => {
      if (this.calls.get(socket) !== res || socket.destroyed) return;
      this.calls.delete(socket);
      this.between.set(socket, Date.now());
    });
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
    while (this.live() > this.cap && this.evictOne(null)) this.shed.evicted++;
  }

  /** Closes the connection least likely to be an operator's; false when every one is in a call. */
  private evictOne(spare: Socket | null): boolean {
    const victim = first(this.headless, spare) ?? first(this.between, spare);
    // An answer still being written: a 408 after part of it would corrupt it, so the connection is only cut.
    const cut = victim === null ? this.answeredCall(spare) : null;
    if (victim === null && cut === null) return false;
    this.drop((victim ?? cut)!, victim === null ? null : 'Svc.Request.Timeout');
    this.shed.evicted++;
    return true;
  }

  private answeredCall(spare: Socket | null): Socket | null {
    for (const [socket, res] of this.calls) if (socket !== spare && res.writableEnded) return socket;
    return null;
  }

  /** Answers `code` (null: none) and closes at once (no linger: the descriptor is what is short). */
  private drop(socket: Socket, code: 'Svc.Request.Timeout' | 'Svc.Request.AdminFull' | null): void {
    if (!this.headless.delete(socket) && !this.between.delete(socket) && !this.calls.delete(socket)) return;
    this.leaving++;
    if (code === null || socket.writableEnded || socket.destroyed) socket.destroy();
    else refuseAndClose(socket, code, false);
  }

  /** Closes headless connections past the deadline of the current load. */
  private sweep(): void {
    const now = Date.now();
    if (now - this.refreshedAt >= REFRESH_MS) this.refresh(now);
    const deadline = headDeadlineMs(this.live() / this.cap, this.headTimeoutMs);
    for (const [socket, since] of this.headless) {
      if (now - since < deadline) break;
      this.drop(socket, 'Svc.Request.Timeout');
      if (deadline < this.headTimeoutMs) this.shed.timedOut++;
    }
    if (this.open === 0 && this.sweeper) {
      clearInterval(this.sweeper);
      this.sweeper = null;
    }
    this.report(now);
  }

  /** One warn line per LOG_EVERY_MS while connections are shed, with what was shed. */
  private report(now: number): void {
    const { timedOut, evicted, refused, loggedAt } = this.shed;
    if (timedOut + evicted + refused === 0 || now - loggedAt < LOG_EVERY_MS) return;
    const deadlineMs = headDeadlineMs(this.live() / this.cap, this.headTimeoutMs);
    this.log.warn({ open: this.live(), cap: this.cap, headDeadlineMs: deadlineMs, timedOut, evicted, refused }, 'admin connections shed');
    this.shed = { timedOut: 0, evicted: 0, refused: 0, loggedAt: now };
  }
}

function first(m: Map<Socket, number>, spare: Socket | null): Socket | null {
  for (const socket of m.keys()) if (socket !== spare) return socket;
  return null;
}
