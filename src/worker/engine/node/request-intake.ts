import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import type { Duplex } from 'node:stream';
import type { Logger } from '../../../shared/logger.js';
import type { Arrival, Downstream, EngineHandlers, EngineLimits, RequestHead } from '../contract.js';
import { connectionOf, type ConnectionBook } from './connections.js';
import type { DownstreamContext } from './downstream-context.js';
import { NodeDownstream } from './downstream.js';
import { refuseOn } from './raw-response.js';
import { NodeRequestHead } from './request-head.js';
import { isWebSocketHandshake, UpgradeDownstream } from './upgrade-downstream.js';
import { WebSocketUpgrades } from './websockets.js';

/** An h2 header list's size as SETTINGS_MAX_HEADER_LIST_SIZE counts it (RFC 9113 §6.5.2). */
function headerListBytes(raw: string[]): number {
  let n = 0;
  for (let i = 0; i < raw.length; i++) n += raw[i]!.length + (i & 1 ? 32 : 0);
  return n;
}

/** llhttp's refusals of a body's framing (Content-Length, Transfer-Encoding): answered as the data server answers them. */
const FRAMING_ERRORS = new Set(['HPE_INVALID_TRANSFER_ENCODING', 'HPE_UNEXPECTED_CONTENT_LENGTH', 'HPE_INVALID_CONTENT_LENGTH']);

/**
 * What node's servers hand the engine per request (an HTTP/1.1 request, an h2 stream, an
 * 'upgrade', a head node could not parse): each becomes a request for the owner with its
 * downstream, or the engine's own refusal.
 */
export class RequestIntake {
  private readonly websockets: WebSocketUpgrades;

  constructor(
    private readonly handlers: EngineHandlers,
    private readonly limits: EngineLimits,
    private readonly book: ConnectionBook,
    private readonly ctx: DownstreamContext,
    private readonly log: Logger,
  ) {
    this.websockets = new WebSocketUpgrades(handlers, log);
  }

  onH2Request(r: Http2ServerRequest, res: Http2ServerResponse, tls: boolean, port: string): void {
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

  onH1Request(req: IncomingMessage, res: ServerResponse, tls: boolean, port: string): void {
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

  onUpgrade(req: IncomingMessage, socket: Duplex, rest: Buffer, tls: boolean, port: string): void {
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
  refuseConnection(socket: Duplex, code: 'Svc.Data.BadRequest' | 'Svc.Data.BadFraming' | 'Svc.Data.HeadTooLarge' | 'Svc.Data.HeadTimeout'): void {
    const conn = connectionOf(socket);
    if (conn) conn.refused = true;
    refuseOn(socket, this.handlers.refusal(code));
  }

  /** A request node could not parse: our envelope (431 for a head too large, else 400) as HTTP/1.1, then the close. */
  onClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
    const code = err.code ?? '';
    if (code === 'ECONNRESET' || !socket.writable || (socket as { _httpMessage?: unknown })._httpMessage) return void socket.destroy();
    this.refuseConnection(socket, code === 'HPE_HEADER_OVERFLOW' ? 'Svc.Data.HeadTooLarge' : code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 'Svc.Data.HeadTimeout' : FRAMING_ERRORS.has(code) ? 'Svc.Data.BadFraming' : 'Svc.Data.BadRequest');
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
