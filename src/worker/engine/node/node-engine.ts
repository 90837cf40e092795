import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2Server, Http2ServerRequest, Http2ServerResponse, ServerHttp2Session } from 'node:http2';
import { Server as NetServer } from 'node:net';
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import type { CompiledServerTls } from '../../../contracts/generation.js';
import type { Logger } from '../../../shared/logger.js';
import type { DataEngine, EngineHandlers, EngineLimits, ListenOptions } from '../contract.js';
import { ConnectionBook, handshaken, sessionStarted } from './connections.js';
import type { DownstreamContext } from './downstream-context.js';
import { watchSession, type SessionWatch } from './h2-sessions.js';
import { HeldWrites } from './held-writes.js';
import { bindListener, cleartextServers, tcpListener, tlsListener, tlsServer, type H1Server, type TlsServer } from './listeners.js';
import { RequestIntake } from './request-intake.js';
import { ResetCooldown } from './reset-cooldown.js';
import { SniContexts } from './sni-contexts.js';
import { PeerIdentities } from './peer-identity.js';

/** The data-plane engine on node:http and node:http2: HTTP/1.1, h2 over TLS (ALPN) and h2c with prior knowledge. */
export function createNodeEngine(handlers: EngineHandlers, limits: EngineLimits, log: Logger): DataEngine {
  return new NodeEngine(handlers, limits, log);
}

class NodeEngine implements DataEngine {
  readonly name = 'node' as const;
  private readonly book: ConnectionBook;
  private readonly sessionWatch: SessionWatch;
  private readonly intake: RequestIntake;
  private readonly sni: SniContexts;
  private readonly listeners: NetServer[] = [];
  private readonly tlsServers: TlsServer[] = [];

  constructor(
    handlers: EngineHandlers,
    private readonly limits: EngineLimits,
    private readonly log: Logger,
  ) {
    const cooldown = new ResetCooldown(limits.h2ResetCooldownS * 1000);
    this.book = new ConnectionBook(limits, handlers, cooldown);
    const progressPollMs = Math.max(50, Math.min(1_000, limits.sendTimeoutMs / 4));
    const ctx: DownstreamContext = { draining: () => this.book.draining, ownResets: new WeakSet(), progressPollMs, heldWrites: new HeldWrites(progressPollMs), identities: new PeerIdentities() };
    this.sessionWatch = { ownResets: ctx.ownResets, events: handlers.events, cooldown, log };
    this.intake = new RequestIntake(handlers, limits, this.book, ctx, log);
    this.sni = new SniContexts(log);
  }

  get connections(): number {
    return this.book.open;
  }

  listen(options: ListenOptions): Promise<boolean> {
    const port = String(options.port);
    let server: NetServer;
    if (options.tls) {
      const clients = options.tls.clientCertificates;
      if (clients) this.sni.trustClients(clients.ca);
      this.sni.update(options.tls.certificates);
      const tls = tlsServer(options.tls.protocols, this.sni, this.limits, clients?.mode);
      this.useDefaultContext(tls);
      this.tlsServers.push(tls);
      tls.prependListener('secureConnection', (socket: TLSSocket) => handshaken(socket));
      this.serveH1(tls, true, port);
      if (options.tls.protocols.includes('h2')) this.serveH2(tls as unknown as Http2Server, true, port);
      server = tlsListener(tls, (socket) => this.book.admit(socket, false) !== null);
    } else {
      const { h1, h2 } = cleartextServers(this.limits, options.h2c === true);
      this.serveH1(h1, false, port);
      if (h2) this.serveH2(h2, false, port);
      server = tcpListener(h1, h2, (socket) => this.book.admit(socket, true) !== null);
    }
    return bindListener(server, options.host, options.port, this.log).then((bound) => {
      if (bound) this.listeners.push(server);
      return bound;
    });
  }

  updateCertificates(certificates: CompiledServerTls | undefined): void {
    this.sni.update(certificates);
    for (const s of this.tlsServers) this.useDefaultContext(s);
  }

  stopAccepting(): void {
    // net.Server's close stops the listening socket only: an https or h2 server's own close
    // first cuts its idle kept-alive connections, which the drain leaves to their next answer.
    for (const l of this.listeners) NetServer.prototype.close.call(l);
    this.listeners.length = 0;
    this.book.drain();
  }

  /** Handshakes without a server name get the default certificate; without one they fail. */
  private useDefaultContext(server: TlsServer): void {
    server.setSecureContext(this.sni.defaultOptions ?? this.sni.bareOptions);
  }

  private serveH1(server: H1Server, tls: boolean, port: string): void {
    server.on('request', (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse) => {
      // h2 streams come with a `stream` (serveH2 takes them); an HTTP/1.1 parser's request has none, whatever version its line names.
      if (!('stream' in req)) this.intake.onH1Request(req as IncomingMessage, res as ServerResponse, tls, port);
    });
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, rest: Buffer) => this.intake.onUpgrade(req, socket, rest, tls, port));
    // An Expect other than 100-continue: the request goes to its route as on uws, never node's own bare 417.
    server.on('checkExpectation', (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse) => {
      if ('stream' in req) this.intake.onH2Request(req, res as Http2ServerResponse, tls, port);
      else this.intake.onH1Request(req, res as ServerResponse, tls, port);
    });
    server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => this.intake.onClientError(err, socket));
    // A CONNECT (authority form) is no request a gateway route can take: refused and closed, as nginx does.
    server.on('connect', (_req: IncomingMessage, socket: Duplex) => this.intake.refuseConnection(socket, 'Svc.Data.BadRequest'));
  }

  private serveH2(server: Http2Server, tls: boolean, port: string): void {
    server.on('session', (session: ServerHttp2Session) => {
      sessionStarted(session);
      watchSession(session, this.limits, this.sessionWatch);
    });
    server.on('request', (req: Http2ServerRequest | IncomingMessage, res: Http2ServerResponse | ServerResponse) => {
      if ('stream' in req) this.intake.onH2Request(req, res as Http2ServerResponse, tls, port);
    });
    // An h2c server has no HTTP/1.1 side to take an odd Expect (serveH1 does it on a TLS server).
    if (server.listenerCount('checkExpectation') === 0) server.on('checkExpectation', (req: Http2ServerRequest, res: Http2ServerResponse) => this.intake.onH2Request(req, res, tls, port));
  }
}
