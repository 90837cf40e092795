import type { ResponseHead, WebSocketPeer } from './engine/contract.js';
import { isBodylessStatus, type StaticReply } from './response-head.js';
import { ExchangeWrites } from './exchange-writes.js';
import { asksClose } from '../shared/hop-by-hop.js';

const isConnection = ([name]: readonly [string, string]): boolean => name.length === 10 && name.toLowerCase() === 'connection';

/** Whole responses the gateway sends at once (a step's, a fixed one, an error) and the WebSocket 101. */
export abstract class ExchangeReplies extends ExchangeWrites {
  /** A WebSocket handshake the engine can complete (the route proxies it or refuses it). */
  wantsUpgrade = false;

  /** A complete response in one write. Ignored once aborted or done. */
  send(status: number, body: string | Buffer, headers?: Record<string, string>): void {
    this.sendHead(status, body, headers ? Object.entries(headers) : []);
  }

  /**
   * Like send, with headers as a list (repeated names allowed). The engines own the
   * Connection line: a reply's own (a step's `connection: close`) is taken out and asks
   * for the close, so each engine writes one line and closes alike.
   */
  sendHead(status: number, body: string | Buffer, headers: [string, string][]): void {
    if (this.aborted || this.done) return;
    let close = false;
    if (headers.some(isConnection)) {
      close = headers.some((h) => isConnection(h) && asksClose(h[1]));
      headers = headers.filter((h) => !isConnection(h));
    }
    this.whole(status, { status, reason: '', headers: this.idEcho === null ? headers : this.withoutId(headers) }, body, close);
  }

  /** A response fixed at compile time that could not go out from the request callback (see DataServer). */
  sendStatic(r: StaticReply): void {
    if (this.aborted || this.done) return;
    this.whole(r.status, { status: r.status, reason: '', headers: r.headers, block: r.head }, r.body);
  }

  /**
   * A whole response: a 204 or 304 without a body or a length, an answer to HEAD with the
   * length a GET would get and never the body (RFC 9110 §9.3.2). The response completed
   * once its last byte went out: a client leaving before that ends it with 499.
   */
  private whole(status: number, head: ResponseHead, body: string | Buffer, asked = false): void {
    this.status = status;
    this.pendingHead = null; // a held streamed head is replaced by this response
    // A body we did not read to the end makes the connection unusable: close it.
    const close = asked || this.closing() || this.upload.open;
    this.done = true; // nothing more is written; the exchange ends with the last byte
    if (isBodylessStatus(status)) return this.down.reply(head, this.idEcho, null, undefined, close, this);
    const length = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
    if (this.method === 'HEAD') return this.down.reply(head, this.idEcho, null, length, close, this);
    this.bytesSent += length;
    this.down.reply(head, this.idEcho, body, undefined, close, this);
  }

  sendJson(status: number, value: unknown, headers?: Record<string, string>): void {
    this.send(status, JSON.stringify(value), { 'content-type': 'application/json', ...headers });
  }

  /**
   * Completes a WebSocket handshake with 101 and the upstream's subprotocol (no extension:
   * frames are relayed as they are). The engine then attaches `peer` to the client side.
   */
  upgrade(peer: WebSocketPeer, protocol: string): boolean {
    if (this.aborted || this.done || !this.wantsUpgrade) return false;
    const key = this.header('sec-websocket-key') ?? '';
    if (!this.down.upgrade(peer, key, protocol, this.idEcho)) return false;
    this.status = 101;
    this.settle();
    return true;
  }
}
