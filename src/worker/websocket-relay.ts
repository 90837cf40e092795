import type { WebSocket as UpstreamSocket, RawData } from 'ws';
import type { ClientWebSocket, WebSocketPeer } from './engine/contract.js';
import type { WebSocketSettings } from '../contracts/generation.js';

/** Client-side bytes uWS may hold before the upstream is paused, and the level it resumes at. */
const CLIENT_HIGH_BYTES = 1024 * 1024;
const CLIENT_LOW_BYTES = 256 * 1024;

/**
 * uWS.js cannot pause a WebSocket's reads: a client sending faster than the upstream takes
 * is closed with 1013 (try again later) once this much (beyond one whole message) waits.
 */
const UPSTREAM_HOLD_BYTES = 4 * 1024 * 1024;

/** Close codes an endpoint may send in a close frame (RFC 6455 §7.4); others are never on the wire. */
const sendable = (code: number): boolean => (code >= 1000 && code <= 1014 && code !== 1004 && code !== 1005 && code !== 1006) || (code >= 3000 && code <= 4999);

/** A client's bytes as a Buffer of their own: uWS's ArrayBuffer is valid only during its callback (copied); a Buffer is already the receiver's. */
const owned = (data: ArrayBuffer | Buffer): Buffer => (Buffer.isBuffer(data) ? data : Buffer.from(data.slice(0)));

/**
 * One proxied WebSocket: frames both ways between the client's uWS socket and the
 * upstream's `ws` socket, whole messages (fragments are joined by each side's parser).
 * Backpressure: the upstream socket is paused while uWS holds more than CLIENT_HIGH_BYTES
 * for a slow client; the other way uWS offers no pause, so the bytes waiting for the
 * upstream are bounded by a close instead. Pings travel through; pongs are answered by
 * each hop. A close on either side closes the other with the same code and reason.
 */
export class WebSocketRelay implements WebSocketPeer {
  private client: ClientWebSocket | null = null;
  private upstreamPaused = false;
  /** Bytes handed to the upstream socket and not yet written to its TCP socket. */
  private toUpstream = 0;
  private closed = false;
  /** Date.now() of the last frame either way (the route's idleTimeoutMs). */
  lastActivity = Date.now();

  constructor(
    readonly upstream: UpstreamSocket,
    readonly settings: WebSocketSettings,
    /** Runs once when both sides are done (the route's connection count, the drain's set). */
    private readonly onEnd: () => void,
  ) {
    // The upstream broke the protocol (`ws` closes it): the client gets the code that names why.
    upstream.on('error', (err: Error & { code?: string }) => {
      if (this.client !== null) this.closeBoth(err.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH' ? 1009 : err.code === 'WS_ERR_INVALID_UTF8' ? 1007 : 1002, 'upstream: ' + err.message.slice(0, 100));
    });
  }

  /** uWS opened the client side: frames may flow. */
  attach(client: ClientWebSocket): void {
    this.client = client;
    const up = this.upstream;
    up.on('message', (data: RawData, isBinary: boolean) => this.fromUpstream(data as Buffer, isBinary));
    up.on('ping', (data: Buffer) => {
      this.lastActivity = Date.now();
      if (!this.closed) client.ping(data);
    });
    up.on('pong', () => void (this.lastActivity = Date.now()));
    up.on('close', (code: number, reason: Buffer) => this.upstreamClosed(code, reason));
    up.resume(); // paused by the handshake until this side existed
  }

  private fromUpstream(data: Buffer, isBinary: boolean): void {
    if (this.closed || this.client === null) return;
    this.lastActivity = Date.now();
    const client = this.client;
    client.send(data, isBinary);
    if (!this.upstreamPaused && client.getBufferedAmount() > CLIENT_HIGH_BYTES) {
      this.upstreamPaused = true;
      this.upstream.pause();
    }
  }

  /** uWS's drain: the client took bytes; the upstream resumes once little is left. */
  clientDrained(): void {
    if (this.upstreamPaused && !this.closed && this.client!.getBufferedAmount() < CLIENT_LOW_BYTES) {
      this.upstreamPaused = false;
      this.upstream.resume();
    }
  }

  /** A message from the client; `message` is valid only during uWS's callback, so it is copied. */
  fromClient(message: ArrayBuffer | Buffer, isBinary: boolean): void {
    if (this.closed) return;
    this.lastActivity = Date.now();
    if (message.byteLength > this.settings.maxMessageBytes) return this.closeBoth(1009, 'message too big');
    const data = owned(message);
    this.toUpstream += data.length;
    if (this.toUpstream > UPSTREAM_HOLD_BYTES + this.settings.maxMessageBytes) return this.closeBoth(1013, 'upstream too slow');
    this.upstream.send(data, { binary: isBinary }, () => void (this.toUpstream -= data.length));
  }

  clientPing(data: ArrayBuffer | Buffer): void {
    this.lastActivity = Date.now();
    if (!this.closed) this.upstream.ping(owned(data));
  }

  clientPong(): void {
    this.lastActivity = Date.now();
  }

  /** uWS's close: the client's code and reason go upstream (no frame: the upstream is cut, 1006 stays 1006). */
  clientClosed(code: number, reason: ArrayBuffer | Buffer): void {
    this.client = null;
    if (this.closed) return this.onEnd();
    this.closed = true;
    if (sendable(code)) this.upstream.close(code, owned(reason));
    else if (code === 1005) this.upstream.close();
    else this.upstream.terminate();
    this.onEnd();
  }

  private upstreamClosed(code: number, reason: Buffer): void {
    if (this.closed) return;
    this.closed = true;
    const client = this.client;
    if (client === null) return;
    // An upstream gone without a close frame (1006) is a gateway failure to the client: 1014, bad gateway.
    if (sendable(code)) client.end(code, reason);
    else if (code === 1005) client.end();
    else client.end(1014, 'upstream closed without a close frame');
  }

  /** The gateway ends this WebSocket (a limit, the idle timer, a drain): both sides get `code`. */
  closeBoth(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.upstream.close(code === 1009 || code === 1013 ? 1001 : code, reason);
    // The upstream may never answer its close frame: terminate it after a short wait.
    setTimeout(() => this.upstream.terminate(), 2_000).unref();
    this.client?.end(code, reason);
  }
}
