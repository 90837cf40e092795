import { upgradeLater, type us_socket_context_t } from './uws.js';
import { headBlock, isBodylessStatus, statusLine, type StaticReply } from './response-head.js';
import { endWithTryEnd, fitsCork } from './cork-room.js';
import { requestCallback } from './request-callback.js';
import { ExchangeWrites } from './exchange-writes.js';

/** Whole responses the gateway sends at once (a step's, a fixed one, an error) and the WebSocket 101. */
export abstract class ExchangeReplies extends ExchangeWrites {
  /** A WebSocket handshake's uWS context (set by DataServer's upgrade handler, needed by res.upgrade); null on any other request. */
  upgradeContext: us_socket_context_t | null = null;

  /** A complete response in one corked write. Ignored once aborted or done. */
  send(status: number, body: string | Buffer, headers?: Record<string, string>): void {
    this.sendHead(status, body, headers ? Object.entries(headers) : []);
  }

  /** Like send, with headers as a list (repeated names allowed). */
  sendHead(status: number, body: string | Buffer, headers: [string, string][]): void {
    if (this.aborted || this.done) return;
    this.status = status;
    const head = headBlock(statusLine(status), this.idEcho === '' ? headers : this.withoutId(headers)) + this.idEcho;
    if (isBodylessStatus(status)) this.sendNoBody(head);
    else this.sendBlock(head, body);
  }

  /** A response fixed at compile time whose body is too large to go out from the request callback (see DataServer). */
  sendStatic(r: StaticReply): void {
    if (this.aborted || this.done) return;
    this.status = r.status;
    if (r.bodyless) this.sendNoBody(r.head + this.idEcho);
    else this.sendBlock(r.head + this.idEcho, r.body);
  }

  /** A 204 or 304 the gateway answers itself: no body and no length (a step's echo, a directResponse). */
  private sendNoBody(head: string): void {
    if (this.aborted || this.done) return;
    const close = this.closing() || this.upload.open;
    if (close && requestCallback.active) return void setImmediate(() => this.sendNoBody(head));
    this.pendingHead = null;
    this.endBodyless(head, undefined, close);
    this.finish();
  }

  private sendBlock(head: string, body: string | Buffer): void {
    if (this.aborted || this.done) return;
    // A body we did not read to the end makes the connection unusable: close it.
    const close = this.closing() || this.upload.open;
    // Inside uWS's parse a close is only a flag, and the bytes behind this request are read
    // as requests (after a framing refusal, a smuggled one): see request-callback.ts.
    if (close && requestCallback.active) return void setImmediate(() => this.sendBlock(head, body));
    this.pendingHead = null; // a held streamed head is replaced by this response
    if (this.method === 'HEAD') {
      // The length of the body a GET would get, never the body (RFC 9110 §9.3.2).
      this.endBodyless(head, typeof body === 'string' ? Buffer.byteLength(body) : body.length, close);
      return this.finish();
    }
    this.bytesSent += typeof body === 'string' ? Buffer.byteLength(body) : body.length;
    if (fitsCork(head.length, body)) {
      this.res.cork(() => {
        this.res.writeStatus(head);
        this.res.end(body, close);
      });
      this.finish();
    } else {
      // Too large for one cork (see cork-room.ts): tryEnd, the rest when writable. uWS's
      // tryEnd cannot close the connection, so the head asks the client to. The response
      // completed once its last byte went out: a client leaving before that ends it with 499.
      this.done = true; // nothing more is written; the exchange ends with the last byte
      endWithTryEnd(this.res, close ? `${head}\r\nconnection: close` : head, typeof body === 'string' ? Buffer.from(body) : body, () => this.finish(), this.sendStall);
    }
  }

  sendJson(status: number, value: unknown, headers?: Record<string, string>): void {
    this.send(status, JSON.stringify(value), { 'content-type': 'application/json', ...headers });
  }

  /**
   * Completes a WebSocket handshake with 101 and the upstream's subprotocol (no extension:
   * frames are relayed as they are). uWS then calls the data server's `open` with `userData`.
   */
  upgrade<T>(userData: T, protocol: string): boolean {
    const ctx = this.upgradeContext;
    if (this.aborted || this.done || ctx === null) return false;
    const key = this.header('sec-websocket-key') ?? '';
    this.status = 101;
    const idEcho = this.idEcho;
    // uWS writes its own 101 line only if none was written: this one carries the request id (headBlock's way).
    upgradeLater(this.res, userData, key, protocol, ctx, idEcho === '' ? null : `101 Switching Protocols${idEcho}`);
    this.finish();
    return true;
  }
}
