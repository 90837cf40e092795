import { errors, type Dispatcher } from 'undici';
import type { Upstream } from '../../../contracts/upstream.js';
import type { TargetConnection } from '../../../shared/upstream-connect.js';
import { openH2Session } from '../../../shared/upstream-h2-session.js';
import { targetParts } from '../../../shared/target-url.js';
import type { UpstreamTlsError } from '../../../shared/upstream-tls.js';
import { PendingQueue } from '../../pending-queue.js';
import { H2Session } from './h2-session.js';
import type { SessionOwner } from './session-owner.js';
import { legacyHandler } from './legacy-handler.js';

export interface H2TargetPoolOptions {
  /** The target as written (`https://host:port` for h2, `host:port` or `http://…` for h2c). */
  target: string;
  /** How a connection is made (upstream-connect.ts): the upstream policy, TLS with ALPN h2. */
  connection: TargetConnection;
  /** Connections (sessions) at most. */
  connections: number;
  maxPending?: number;
  pendingTimeoutMs?: number;
  /** A session without streams this long closes. */
  idleMs: number;
  /** How long a new session may take to get the peer's first SETTINGS once connected (the cluster's connect timeout); a PING's answer too. */
  connectMs: number;
  /** A PING this often on a session that carries streams (cluster timeouts.pingMs). */
  pingMs: number;
  /** A connection to the target could not be made (refused, timed out, denied, TLS or ALPN failed). */
  onConnectError?: () => void;
  /** A TLS connection that did not negotiate h2 (the workers' warn line). */
  onTlsFailure?: (err: UpstreamTlsError) => void;
}

/**
 * HTTP/2 connections to one upstream target, in the role TargetPool has for HTTP/1.1 (an
 * `h2` or `h2c` cluster's: upstream-pools.ts). Requests are streams: they go on the first
 * session with a free stream slot; another session is opened only when every one is at
 * the peer's SETTINGS_MAX_CONCURRENT_STREAMS, up to `connections`; beyond that requests
 * wait in the same FIFO queue as TargetPool's (pending-queue.ts: `maxPending`,
 * `pendingTimeoutMs`, then UPSTREAM_BUSY). A session that got a GOAWAY stops counting: its
 * open streams finish while new ones go on a new session. Idle sessions close after
 * `idleMs`, as the HTTP/1.1 pool's keep-alive connections do.
 */
export class H2TargetPool implements Upstream, SessionOwner {
  private readonly sessions: H2Session[] = [];
  private readonly pending: PendingQueue;
  private closed = false;
  private readonly place: { scheme: 'http' | 'https'; authority: string; conn: Upstream };

  constructor(private readonly options: H2TargetPoolOptions) {
    this.pending = new PendingQueue(options.maxPending ?? Infinity, options.pendingTimeoutMs ?? 0, options.connections);
    const { secure, hostPort } = targetParts(options.target);
    // A re-send (forwarding.ts) goes to this pool again, which takes a live session or opens one.
    this.place = { scheme: secure ? 'https' : 'http', authority: hostPort, conn: this };
  }

  dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const h = legacyHandler(handler);
    if (this.closed) {
      h.onError!(new errors.ClientClosedError());
      return false;
    }
    const s = this.sessionWithRoom();
    if (s === null) {
      this.pending.add(opts, h);
      return false;
    }
    s.run(opts, h);
    return true;
  }

  /** New requests are refused, waiting ones fail as on a closed client; open streams finish, then the sessions close. */
  async close(): Promise<void> {
    this.closed = true;
    this.pending.clear((_opts, handler) => handler.onError!(new errors.ClientClosedError()));
    const all = this.sessions.map((s) => s.gone);
    for (const s of [...this.sessions]) s.drain();
    await Promise.all(all);
  }

  /** Sessions open or opening (tests). */
  get size(): number {
    return this.sessions.length;
  }

  /** Requests in flight or waiting: streams on every session, and the queue. */
  get busy(): number {
    let n = this.pending.size;
    for (const s of this.sessions) n += s.streams;
    return n;
  }

  /** Requests waiting for a stream slot (tests). */
  get waiting(): number {
    return this.pending.size;
  }

  /** The oldest session with a free slot, or a new one while fewer than `connections` take streams. */
  private sessionWithRoom(): H2Session | null {
    let taking = 0;
    for (const s of this.sessions) {
      if (s.hasRoom) return s;
      if (s.taking) taking++;
    }
    if (this.closed || taking >= this.options.connections) return null;
    const s = new H2Session(this, this.place, this.options.idleMs, this.options.connectMs, this.options.pingMs);
    this.sessions.push(s);
    const o = this.options;
    s.open((done) => openH2Session(o.connection, o.target, done, o.onTlsFailure));
    return s;
  }

  roomMade(): void {
    while (this.pending.size > 0) {
      const s = this.sessionWithRoom();
      if (s === null) return;
      const w = this.pending.take();
      if (w === undefined) return;
      s.run(w.opts, w.handler);
    }
  }

  handBack(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): void {
    this.dispatch(opts, handler);
  }

  ended(connectError: Error | null): void {
    for (let i = this.sessions.length - 1; i >= 0; i--) if (this.sessions[i]!.over) this.sessions.splice(i, 1);
    if (connectError !== null) this.options.onConnectError?.();
    this.roomMade();
  }
}
