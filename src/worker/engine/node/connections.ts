import type { ServerHttp2Session } from 'node:http2';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import type { EngineHandlers, EngineLimits } from '../contract.js';
import { refuseOn } from './raw-response.js';
import type { ResetCooldown } from './reset-cooldown.js';

/** One client connection, whatever speaks on it. */
export interface Connection {
  readonly socket: Socket;
  /** Where an HTTP/1.1 refusal goes: the socket, or its TLS socket once handshaken; null for an h2 session or a handshake in progress. */
  h1: Duplex | null;
  session: ServerHttp2Session | null;
  /** HTTP/1.1 requests not yet answered. */
  inFlight: number;
  /** Refused by the engine: any request still parsed from it is dropped. */
  refused: boolean;
  /** Handed over through 'upgrade' (a WebSocket, or an answer that closes it): a drain leaves it to its owner. */
  upgraded: boolean;
  deadline: NodeJS.Timeout | null;
}

const CONNECTION = Symbol('connection');

/** Its answer closes the connection: nothing node still parses from it is served. */
export function closingConnection(socket: object | null | undefined): void {
  const conn = connectionOf(socket);
  if (conn) conn.refused = true;
}

/** Marks a socket (TCP or TLS) as `conn`'s. */
export function tag(socket: object, conn: Connection): void {
  (socket as { [CONNECTION]?: Connection })[CONNECTION] = conn;
}

/** The connection of a socket; also through node's h2 socket proxies, which pass property reads on to the socket. */
export function connectionOf(socket: object | null | undefined): Connection | undefined {
  return socket ? (socket as { [CONNECTION]?: Connection })[CONNECTION] : undefined;
}

/** A TLS handshake completed: its socket is its TCP connection's, and takes HTTP/1.1 refusals unless it speaks h2. */
export function handshaken(socket: TLSSocket): void {
  // node keeps the TCP socket a TLS socket wraps as `_parent`.
  const conn = connectionOf((socket as unknown as { _parent?: Socket })._parent) ?? null;
  if (conn === null) return;
  tag(socket, conn);
  if (socket.alpnProtocol !== 'h2') conn.h1 = socket;
}

/** An h2 session began: a refusal or a drain of its connection goes through the session. */
export function sessionStarted(session: ServerHttp2Session): void {
  const conn = connectionOf(session.socket);
  if (!conn) return;
  conn.session = session;
  conn.h1 = null;
}

/**
 * Every open client connection of the engine, across its listeners: the per-worker cap
 * (503 and close), the first head's deadline (408 and close: from accept until a first
 * request head, then node's headersTimeout takes the later heads) and the drain.
 */
export class ConnectionBook {
  open = 0;
  draining = false;
  private readonly all = new Set<Connection>();

  constructor(
    private readonly limits: EngineLimits,
    private readonly handlers: EngineHandlers,
    private readonly cooldown: ResetCooldown,
  ) {}

  /** A new TCP connection. `cleartext`: a refusal can be written as HTTP/1.1 at once. Null: refused. */
  admit(socket: Socket, cleartext: boolean): Connection | null {
    // An address in its rapid-reset cooldown: cut before it costs a handshake or a byte of parsing.
    if (this.cooldown.refuses(socket.remoteAddress)) {
      this.handlers.events.hit('h2ResetCooldownS', { address: socket.remoteAddress ?? '' });
      socket.on('error', () => {});
      socket.destroy();
      return null;
    }
    this.open++;
    const conn: Connection = { socket, h1: cleartext ? socket : null, session: null, inFlight: 0, refused: false, upgraded: false, deadline: null };
    // Errors of a socket node's servers do not own yet (reset while sniffed or refused).
    socket.on('error', () => {});
    socket.once('close', () => {
      this.open--;
      this.all.delete(conn);
      if (conn.deadline) clearTimeout(conn.deadline);
    });
    if (this.open > this.limits.maxConnections) {
      this.handlers.events.hit('maxConnections', { open: this.open - 1 });
      conn.refused = true;
      // A TLS connection is cut before its handshake: the cap is there to spare the work.
      if (cleartext) refuseOn(socket, this.handlers.refusal('Svc.Data.TooManyConnections'));
      else socket.destroy();
      return null;
    }
    this.all.add(conn);
    tag(socket, conn);
    conn.deadline = setTimeout(() => this.expired(conn), this.limits.headerTimeoutMs);
    conn.deadline.unref();
    return conn;
  }

  /** A request head completed on `conn`: its first head's deadline is met. */
  headSeen(conn: Connection): void {
    if (conn.deadline === null) return;
    clearTimeout(conn.deadline);
    conn.deadline = null;
  }

  /** An HTTP/1.1 answer ended; during a drain its connection closes then. */
  requestDone(conn: Connection): void {
    conn.inFlight--;
    if (this.draining && conn.inFlight <= 0) conn.h1?.end();
  }

  /**
   * h2 connections get GOAWAY and close once their streams ended; an HTTP/1.1 one closes
   * after its next answer (which asks the client to), as on uws: a readiness probe on a
   * kept-alive connection reads the draining node's 503 instead of a cut.
   */
  drain(): void {
    this.draining = true;
    for (const conn of this.all) if (conn.session) conn.session.close();
  }

  private expired(conn: Connection): void {
    conn.deadline = null;
    if (conn.socket.destroyed) return;
    this.handlers.events.hit('headerTimeout', { timeoutMs: this.limits.headerTimeoutMs });
    conn.refused = true;
    if (conn.session) conn.session.destroy();
    else if (conn.h1) refuseOn(conn.h1, this.handlers.refusal('Svc.Data.HeadTimeout'));
    else conn.socket.destroy();
  }
}
