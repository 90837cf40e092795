import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { StaticReply } from '../../response-head.js';
import type { Downstream, IdEcho, ResponseHead, ResponseSink, WebSocketPeer } from '../contract.js';
import { peerAddress, type DownstreamContext } from './downstream-context.js';
import { h1HeadText, staticReplyBytes } from './raw-response.js';
import type { WebSocketUpgrades } from './websockets.js';
import type { PeerSocket } from './peer-identity.js';
import type { ClientCertificate } from '../../../contracts/client-certificate.js';

/**
 * The downstream of a request node handed over through 'upgrade': a bare socket. A
 * WebSocket handshake completes with `ws`; any other answer is written here as HTTP/1.1
 * and closes the connection (node's parser has let go of the socket).
 */
export class UpgradeDownstream implements Downstream {
  private gone = false;
  private done = false;
  private aborted = false;
  private abortCb: (() => void) | null = null;
  private chunked = false;
  private sent = 0;

  constructor(
    private readonly req: IncomingMessage,
    private readonly socket: Duplex & { remoteAddress?: string; bytesWritten?: number },
    private readonly rest: Buffer,
    private readonly websockets: WebSocketUpgrades,
    private readonly ctx: DownstreamContext,
  ) {
    socket.once('close', () => {
      if (!this.done) this.abort();
    });
  }

  remoteAddress(): string {
    return this.aborted ? '' : peerAddress(this.socket.remoteAddress);
  }

  clientCertificate(): ClientCertificate | null {
    return this.aborted ? null : this.ctx.identities.of(this.socket as PeerSocket);
  }

  onAborted(cb: () => void): void {
    this.abortCb = cb;
  }

  onData(cb: (chunk: ArrayBuffer | Buffer, last: boolean) => void): void {
    // A handshake carries no body; what follows its head is the upgraded protocol's.
    setImmediate(() => {
      if (!this.aborted && !this.done) cb(new ArrayBuffer(0), true);
    });
  }

  pause(): void {}

  resume(): void {}

  reply(head: ResponseHead, id: IdEcho, body: string | Buffer | null, contentLength: number | undefined, _close: boolean, sink: ResponseSink): void {
    if (this.gone) return;
    const length = body === null ? contentLength : Buffer.byteLength(body);
    const text = Buffer.from(h1HeadText(head.status, head.reason, head.headers, id, length, false), 'latin1');
    this.last(body === null || this.req.method === 'HEAD' ? text : Buffer.concat([text, typeof body === 'string' ? Buffer.from(body) : body]), () => sink.responseCompleted());
  }

  replyStatic(r: StaticReply, id: IdEcho, _close: boolean, headOnly: boolean): void {
    if (this.gone) return;
    this.last(staticReplyBytes(r, id, headOnly), () => {});
  }

  write(head: ResponseHead | null, id: IdEcho, chunk: Buffer, total: number | null, _close: boolean, onDrain: () => void, sink: ResponseSink): boolean {
    if (this.gone) return true;
    if (head !== null) {
      this.chunked = total === null;
      this.socket.write(h1HeadText(head.status, head.reason, head.headers, id, total ?? undefined, this.chunked), 'latin1');
    }
    this.sent += chunk.length;
    if (!this.chunked && total !== null && this.sent >= total) {
      this.last(chunk, () => sink.responseCompleted());
      return true;
    }
    const ok = this.chunked ? chunk.length === 0 || this.socket.write(Buffer.concat([Buffer.from(chunk.length.toString(16) + '\r\n'), chunk, Buffer.from('\r\n')])) : this.socket.write(chunk);
    if (!ok) {
      const watch = sink.stallWatch();
      watch.held(this.socket.bytesWritten ?? 0);
      this.socket.once('drain', () => {
        watch.clear();
        if (!this.aborted) onDrain();
      });
    }
    return ok;
  }

  end(head: ResponseHead | null, id: IdEcho, _close: boolean): boolean {
    if (this.gone) return true;
    if (head !== null) this.last(Buffer.from(h1HeadText(head.status, head.reason, head.headers, id, 0, false), 'latin1'), () => {});
    else this.last(Buffer.from(this.chunked ? '0\r\n\r\n' : ''), () => {});
    return true;
  }

  close(): void {
    if (this.aborted) return;
    this.gone = true;
    this.socket.destroy();
    this.abort();
  }

  upgrade(peer: WebSocketPeer, _key: string, protocol: string, id: IdEcho): boolean {
    if (this.gone || !isWebSocketHandshake(this.req)) return false;
    this.gone = true;
    this.done = true;
    this.websockets.complete(this.req, this.socket, this.rest, peer, protocol, id);
    return true;
  }

  /** The answer's last bytes; the connection closes after them. */
  private last(bytes: Buffer, ended: () => void): void {
    this.gone = true;
    this.socket.end(bytes, () => {
      this.done = true;
      ended();
    });
    // A client that never reads does not keep the socket.
    setTimeout(() => this.socket.destroy(), this.ctx.progressPollMs * 20).unref();
  }

  private abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.gone = true;
    const cb = this.abortCb;
    this.abortCb = null;
    cb?.();
  }
}

/** What `ws` accepts as a handshake (RFC 6455 §4.2.1): checked before the owner is told it may upgrade. */
export function isWebSocketHandshake(req: IncomingMessage): boolean {
  return (
    req.method === 'GET' &&
    (req.headers.upgrade ?? '').toLowerCase() === 'websocket' &&
    /^[+/0-9A-Za-z]{22}==$/.test(req.headers['sec-websocket-key'] ?? '') &&
    (req.headers['sec-websocket-version'] === '13' || req.headers['sec-websocket-version'] === '8')
  );
}
