import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2Server, Http2ServerRequest, Http2ServerResponse, ServerHttp2Session } from 'node:http2';
import type { Server as NetServer, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import type { CompiledServerTls } from '../../../contracts/generation.js';
import type { Logger } from '../../../shared/logger.js';
import type { Arrival, DataEngine, Downstream, EngineHandlers, EngineLimits, ListenOptions, RequestHead } from '../contract.js';
import { ConnectionBook, connectionOf, tag } from './connections.js';
import type { DownstreamContext } from './downstream-context.js';
import { NodeDownstream } from './downstream.js';
import { watchSession, type SessionWatch } from './h2-sessions.js';
import { cleartextServers, sniffPreface, tcpListener, tlsServer, type H1Server, type TlsServer } from './listeners.js';
import { refuseOn } from './raw-response.js';
import { ResetCooldown } from './reset-cooldown.js';
import { NodeRequestHead } from './request-head.js';
import { SniContexts } from './sni-contexts.js';
import { CIPHERS } from '../tls-ciphers.js';
import { isWebSocketHandshake, UpgradeDownstream } from './upgrade-downstream.js';
import { WebSocketUpgrades } from './websockets.js';

/**
 * Each worker binds a socket of its own with SO_REUSEPORT where node offers it (22.12, 23.1
 * and later), as uWS does: the kernel spreads connections. On older runtimes node:cluster
 * shares the supervisor's socket, which hands connections to the workers in turn.
 */
const OWN_SOCKET = ((major, minor) => major > 23 || (major === 23 && minor >= 1) || (major === 22 && minor >= 12))(...(process.versions.node.split('.').map(Number) as [number, number]));

/** An h2 header list's size as SETTINGS_MAX_HEADER_LIST_SIZE counts it (RFC 9113 §6.5.2). */
function headerListBytes(raw: string[]): number {
  let n = 0;
  for (let i = 0; i < raw.length; i++) n += raw[i]!.length + (i & 1 ? 32 : 0);
  return n;
}

/** llhttp's refusals of a body's framing (Content-Length, Transfer-Encoding): answered as the data server answers them. */
const FRAMING_ERRORS = new Set(['HPE_INVALID_TRANSFER_ENCODING', 'HPE_UNEXPECTED_CONTENT_LENGTH', 'HPE_INVALID_CONTENT_LENGTH']);

/** The data-plane engine on node:http and node:http2: HTTP/1.1, h2 over TLS (ALPN) and h2c with prior knowledge. */
export function createNodeEngine(handlers: EngineHandlers, limits: EngineLimits, log: Logger): DataEngine {
  return new NodeEngine(handlers, limits, log);
}

class NodeEngine implements DataEngine {
  readonly name = 'node' as const;
  private readonly book: ConnectionBook;
  private readonly sessionWatch: SessionWatch;
  private readonly ctx: DownstreamContext;
  private readonly websockets: WebSocketUpgrades;
  private readonly sni: SniContexts;
  private readonly listeners: NetServer[] = [];
  private readonly tlsServers: TlsServer[] = [];

  constructor(
    private readonly handlers: EngineHandlers,
    private readonly limits: EngineLimits,
    private readonly log: Logger,
  ) {
    const cooldown = new ResetCooldown(limits.h2ResetCooldownS * 1000);
    this.book = new ConnectionBook(limits, handlers, cooldown);
    this.ctx = { draining: () => this.book.draining, ownResets: new WeakSet(), progressPollMs: Math.max(50, Math.min(1_000, limits.sendTimeoutMs / 4)) };
    this.sessionWatch = { ownResets: this.ctx.ownResets, events: handlers.events, cooldown, log };
    this.websockets = new WebSocketUpgrades(handlers, log);
    this.sni = new SniContexts(log);
  }

  get connections(): number {
    return this.book.open;
  }

  listen(options: ListenOptions): Promise<boolean> {
    const port = String(options.port);
    let server: NetServer;
    if (options.tls) {
      this.sni.update(options.tls.certificates);
      const tls = tlsServer(options.tls.protocols, this.sni, this.limits);
      this.useDefaultContext(tls);
      this.tlsServers.push(tls);
      // Before node's own listeners: the cap is checked before any handshake work.
      tls.prependListener('connection', (socket: Socket) => void this.book.admit(socket, false));
      tls.prependListener('secureConnection', (socket: TLSSocket) => this.handshaken(socket));
      this.serveH1(tls, true, port);
      if (options.tls.protocols.includes('h2')) this.serveH2(tls as unknown as Http2Server, true, port);
      server = tls;
    } else {
      const { h1, h2 } = cleartextServers(this.limits, options.h2c === true);
      this.serveH1(h1, false, port);
      if (h2) this.serveH2(h2, false, port);
      server = tcpListener((socket) => {
        if (!this.book.admit(socket, true)) return;
        if (!h2) return void h1.emit('connection', socket);
        sniffPreface(socket, (isH2) => {
          if (isH2) return void h2.emit('connection', socket);
          h1.emit('connection', socket);
          socket.resume(); // node's parser reads the unshifted bytes from the flowing socket
        });
      });
    }
    return new Promise((resolve) => {
      const failed = (err: Error): void => {
        this.log.error({ host: options.host, port: options.port, err: err.message }, 'data port: cannot listen');
        resolve(false);
      };
      server.once('error', failed);
      server.listen({ port: options.port, host: options.host, ...(OWN_SOCKET ? { reusePort: true, exclusive: true } : {}) }, () => {
        server.off('error', failed);
        server.on('error', (err) => this.log.error({ err: err.message }, 'data port listener error'));
        this.listeners.push(server);
        resolve(true);
      });
    });
  }

  updateCertificates(certificates: CompiledServerTls | undefined): void {
    this.sni.update(certificates);
    for (const s of this.tlsServers) this.useDefaultContext(s);
  }

  stopAccepting(): void {
    for (const l of this.listeners) l.close();
    this.listeners.length = 0;
    this.book.drain();
  }

  /** Handshakes without a server name get the default certificate; without one they fail. */
  private useDefaultContext(server: TlsServer): void {
    server.setSecureContext(this.sni.defaultOptions ?? { ciphers: CIPHERS });
  }

  private handshaken(socket: TLSSocket): void {
    // node keeps the TCP socket a TLS socket wraps as `_parent`.
    const conn = connectionOf((socket as unknown as { _parent?: Socket })._parent) ?? null;
    if (conn === null) return;
    tag(socket, conn);
    if (socket.alpnProtocol !== 'h2') conn.h1 = socket;
  }

  private serveH1(server: H1Server, tls: boolean, port: string): void {
    server.on('request', (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse) => {
      // h2 streams come with a `stream` (serveH2 takes them); an HTTP/1.1 parser's request has none, whatever version its line names.
      if (!('stream' in req)) this.onH1Request(req as IncomingMessage, res as ServerResponse, tls, port);
    });
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, rest: Buffer) => this.onUpgrade(req, socket, rest, tls, port));
    // An Expect other than 100-continue: the request goes to its route as on uws, never node's own bare 417.
    server.on('checkExpectation', (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse) => {
      if ('stream' in req) this.onH2Request(req, res as Http2ServerResponse, tls, port);
      else this.onH1Request(req, res as ServerResponse, tls, port);
    });
    server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => this.onClientError(err, socket));
    // A CONNECT (authority form) is no request a gateway route can take: refused and closed, as nginx does.
    server.on('connect', (_req: IncomingMessage, socket: Duplex) => this.refuseConnection(socket, 'Svc.Data.BadRequest'));
  }

  private serveH2(server: Http2Server, tls: boolean, port: string): void {
    server.on('session', (session: ServerHttp2Session) => {
      const conn = connectionOf(session.socket);
      if (conn) {
        conn.session = session;
        conn.h1 = null;
      }
      watchSession(session, this.limits, this.sessionWatch);
    });
    server.on('request', (req: Http2ServerRequest | IncomingMessage, res: Http2ServerResponse | ServerResponse) => {
      if ('stream' in req) this.onH2Request(req, res as Http2ServerResponse, tls, port);
    });
    // An h2c server has no HTTP/1.1 side to take an odd Expect (serveH1 does it on a TLS server).
    if (server.listenerCount('checkExpectation') === 0) server.on('checkExpectation', (req: Http2ServerRequest, res: Http2ServerResponse) => this.onH2Request(req, res, tls, port));
  }

  private onH2Request(r: Http2ServerRequest, res: Http2ServerResponse, tls: boolean, port: string): void {
    const conn = connectionOf(r.socket);
    if (conn) this.book.headSeen(conn);
    // The header list over limits.h2MaxHeaderListBytes (RFC 9113 §6.5.2: name, value and 32 bytes a field): 431, as an HTTP/1.1 head over maxHeadBytes.
    if (headerListBytes(r.rawHeaders) > this.limits.h2MaxHeaderListBytes) {
      return new NodeDownstream(r, res, true, this.ctx).replyStatic(this.handlers.refusal('Svc.Data.HeadTooLarge'), null, false, false);
    }
    // A stream reset in the same read as its HEADERS (rapid reset) is closed by the next turn: it never reaches the owner, nor an upstream.
    setImmediate(() => {
      if (r.stream.closed) return;
      const down = new NodeDownstream(r, res, true, this.ctx);
      this.dispatch(new NodeRequestHead(r, true), down, { tls, port, protocol: 'h2', upgrade: false });
    });
  }

  private onH1Request(req: IncomingMessage, res: ServerResponse, tls: boolean, port: string): void {
    const conn = connectionOf(req.socket);
    if (conn?.refused) return void req.socket.destroy();
    // Only HTTP/1.x on this parser: `GET / HTTP/2.0` is no h2 connection (nginx: 505).
    if (req.httpVersionMajor !== 1) return this.refuseConnection(req.socket, 'Svc.Data.BadRequest');
    // Transfer-Encoding in HTTP/1.0 is faulty framing (RFC 9112 §6.1): refused, and the connection closed.
    if (req.httpVersionMinor === 0 && req.headers['transfer-encoding'] !== undefined) return this.refuseConnection(req.socket, 'Svc.Data.BadFraming');
    if (conn) {
      this.book.headSeen(conn);
      conn.inFlight++;
      res.once('close', () => this.book.requestDone(conn));
    }
    const down = new NodeDownstream(req, res, false, this.ctx);
    this.dispatch(new NodeRequestHead(req, false), down, { tls, port, protocol: '1.1', upgrade: false });
  }

  private onUpgrade(req: IncomingMessage, socket: Duplex, rest: Buffer, tls: boolean, port: string): void {
    const conn = connectionOf(socket);
    if (conn?.refused) return void socket.destroy();
    if (conn) {
      this.book.headSeen(conn);
      conn.upgraded = true;
    }
    const down = new UpgradeDownstream(req, socket, rest, this.websockets, this.ctx);
    this.dispatch(new NodeRequestHead(req, false), down, { tls, port, protocol: '1.1', upgrade: isWebSocketHandshake(req) });
  }

  /** A refusal as HTTP/1.1 on a connection nothing more is read from. */
  private refuseConnection(socket: Duplex, code: 'Svc.Data.BadRequest' | 'Svc.Data.BadFraming'): void {
    const conn = connectionOf(socket);
    if (conn) conn.refused = true;
    refuseOn(socket, this.handlers.refusal(code));
  }

  /** A request node could not parse: our envelope (431 for a head too large, else 400) as HTTP/1.1, then the close. */
  private onClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
    const code = err.code ?? '';
    if (code === 'ECONNRESET' || !socket.writable || (socket as { _httpMessage?: unknown })._httpMessage) return void socket.destroy();
    const refusal = code === 'HPE_HEADER_OVERFLOW' ? 'Svc.Data.HeadTooLarge' : code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 'Svc.Data.HeadTimeout' : FRAMING_ERRORS.has(code) ? 'Svc.Data.BadFraming' : 'Svc.Data.BadRequest';
    const conn = connectionOf(socket);
    if (conn) conn.refused = true;
    refuseOn(socket, this.handlers.refusal(refusal));
  }

  /** The owner's request callback; no exception escapes into node's event handlers. */
  private dispatch(head: RequestHead, down: Downstream, arrival: Arrival): void {
    try {
      this.handlers.request(head, down, arrival);
    } catch (err) {
      this.log.error({ err }, 'data port: the request handler threw; connection cut');
      down.close();
    }
  }
}
