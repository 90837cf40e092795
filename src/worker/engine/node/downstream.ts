import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { constants, type Http2ServerRequest, type Http2ServerResponse, type Http2Stream } from 'node:http2';
import type { StaticReply } from '../../response-head.js';
import type { Downstream, IdEcho, ResponseHead, ResponseSink, StallWatch, Trailers, WebSocketPeer } from '../contract.js';
import { h1Headers, h2Headers } from './response-headers.js';
import { staticH1Headers, staticH2Headers } from './static-reply-headers.js';
import { peerAddress, type DownstreamContext } from './downstream-context.js';
import { closingConnection } from './connections.js';
import type { HeldWrite } from './held-writes.js';
import type { PeerSocket } from './peer-identity.js';
import type { ClientCertificate } from '../../../contracts/client-certificate.js';

const noop = (): void => {};
const NO_STALL: StallWatch = { held: noop, clear: noop };
/** A fixed reply's: nobody waits for its end, nothing bounds its held write but the idle timeout. */
const NO_SINK: ResponseSink = { responseCompleted: noop, stallWatch: () => NO_STALL };

/**
 * One request's downstream over node's compatibility API, the same for HTTP/1.1 and h2:
 * node buffers a write the socket (or the stream's flow-control window) cannot take and
 * says so with write()'s result and 'drain'; the owner produces nothing meanwhile, so that
 * buffer stays one chunk deep.
 */
export class NodeDownstream implements Downstream, HeldWrite {
  /** The response ended or the client left: nothing more is written. */
  private gone = false;
  private finished = false;
  private abortCb: (() => void) | null = null;
  private aborted = false;
  /** Body bytes given to node. */
  private sent = 0;
  /** A write is held: it is in ctx.heldWrites, its progress fed to its stall watch. */
  private holding = false;
  /** h2: the owner of the last write, kept for end(). */
  private lastSink: ResponseSink | null = null;
  /** h2: told once the stream closed (its END_STREAM sent). */
  private whenSent: ResponseSink | null = null;
  /** The response was ended here (res.end called): a stream that closes before it was the client's reset. */
  private ended = false;

  constructor(
    private readonly req: IncomingMessage | Http2ServerRequest,
    private readonly res: ServerResponse | Http2ServerResponse,
    private readonly h2: boolean,
    private readonly ctx: DownstreamContext,
  ) {
    // `on`, not `once`: each is emitted once, and once() costs a wrapper and a removal per request.
    res.on('finish', () => {
      this.finished = true;
    });
    res.on('close', () => {
      this.release();
      if (!this.finished) this.abort();
    });
    if (h2) (req as Http2ServerRequest).stream.on('close', () => this.streamClosed());
  }

  remoteAddress(): string {
    return this.aborted ? '' : peerAddress(this.req.socket?.remoteAddress);
  }

  clientCertificate(): ClientCertificate | null {
    if (this.aborted) return null;
    if (!this.h2) return this.ctx.identities.of(this.req.socket as PeerSocket | null);
    // An h2 stream's TLS socket is its session's (node's proxy of it, one per session, which throws once the session is gone).
    const session = (this.req as Http2ServerRequest).stream.session;
    return session && !session.destroyed ? this.ctx.identities.of(session.socket as unknown as PeerSocket) : null;
  }

  onAborted(cb: () => void): void {
    this.abortCb = cb;
  }

  onData(cb: (chunk: ArrayBuffer | Buffer, last: boolean) => void): void {
    const body = this.body();
    body.on('data', (chunk: Buffer) => {
      if (!this.aborted) cb(chunk, false);
    });
    body.on('end', () => {
      if (!this.aborted) cb(new ArrayBuffer(0), true);
    });
  }

  pause(): void {
    this.body().pause();
  }

  resume(): void {
    this.body().resume();
  }

  /**
   * Where the body is read: h2's stream itself, not the compatibility request, which only
   * relays the stream's chunks into a Readable of its own once read. One stream hop less per
   * body: under unary gRPC calls, process.nextTick fell from 6.8 % to 1.0 % of the worker's
   * samples, and a call from 212 to 193 µs of CPU (with h2-call.ts's request options).
   */
  private body(): IncomingMessage | Http2Stream {
    return this.h2 ? (this.req as Http2ServerRequest).stream : (this.req as IncomingMessage);
  }

  reply(head: ResponseHead, id: IdEcho, body: string | Buffer | null, contentLength: number | undefined, close: boolean, sink: ResponseSink): void {
    if (this.gone) return;
    this.gone = true;
    this.writeHead(head, id, body === null ? contentLength : Buffer.byteLength(body), close);
    this.finish(body ?? undefined, sink);
  }

  replyStatic(r: StaticReply, id: IdEcho, close: boolean, headOnly: boolean): void {
    if (this.gone) return;
    this.gone = true;
    this.markClosing(close);
    if (this.h2) (this.res as Http2ServerResponse).writeHead(r.status, staticH2Headers(r, id));
    else (this.res as ServerResponse).writeHead(r.status, undefined, staticH1Headers(r, id, close || this.ctx.draining()));
    this.finish(r.bodyless || headOnly ? undefined : r.body, NO_SINK);
  }

  write(head: ResponseHead | null, id: IdEcho, chunk: Buffer, total: number | null, close: boolean, onDrain: () => void, sink: ResponseSink): boolean {
    if (this.gone) return true;
    if (head !== null) this.writeHead(head, id, total ?? undefined, close);
    if (this.h2) this.lastSink = sink;
    this.sent += chunk.length;
    if (total !== null && this.sent >= total) {
      this.gone = true;
      this.finish(chunk, sink);
      return true;
    }
    const ok = (this.res as ServerResponse).write(chunk);
    if (!ok) {
      this.hold(sink);
      this.res.once('drain', () => {
        this.release();
        if (!this.aborted) onDrain();
      });
    }
    return ok;
  }

  end(head: ResponseHead | null, id: IdEcho, close: boolean, trailers?: Trailers | null): boolean {
    if (this.gone) return true;
    this.gone = true;
    this.ended = true;
    if (head !== null) this.writeHead(head, id, undefined, close);
    // node's h2 compatibility layer always responds with waitForTrailers: these go out with END_STREAM.
    if (this.h2 && trailers) (this.res as Http2ServerResponse).addTrailers(trailerFields(trailers));
    this.res.end();
    if (this.lastSink === null) return true;
    this.whenSent = this.lastSink;
    return false;
  }

  close(): void {
    if (this.aborted) return;
    this.gone = true;
    if (this.h2) {
      const stream = (this.req as Http2ServerRequest).stream;
      this.ctx.ownResets.add(stream);
      if (!stream.destroyed) stream.close(constants.NGHTTP2_INTERNAL_ERROR);
    } else this.req.socket?.destroy();
    // node tells the close on a later turn; the owner learns it at once.
    this.abort();
  }

  upgrade(_peer: WebSocketPeer, _key: string, _protocol: string, _id: IdEcho): boolean {
    // Only requests that came through the server's 'upgrade' event can (upgrade-downstream.ts).
    return false;
  }

  private writeHead(head: ResponseHead, id: IdEcho, contentLength: number | undefined, close: boolean): void {
    this.markClosing(close);
    if (this.h2) (this.res as Http2ServerResponse).writeHead(head.status, h2Headers(head.headers, id, contentLength));
    else (this.res as ServerResponse).writeHead(head.status, head.reason || undefined, h1Headers(head.headers, id, contentLength, close || this.ctx.draining()));
  }

  /** A closing answer ends the connection: a request pipelined behind it is never served (a smuggled one after a framing refusal). */
  private markClosing(close: boolean): void {
    if (close && !this.h2) closingConnection(this.req.socket);
  }

  /** The last bytes: the sink is told once they went out; a tail the client does not take is watched. */
  private finish(last: string | Buffer | undefined, sink: ResponseSink): void {
    this.ended = true;
    if (this.h2) {
      this.whenSent = sink;
    } else {
      this.res.once('finish', () => {
        this.release();
        sink.responseCompleted();
      });
    }
    if (last === undefined) this.res.end();
    else this.res.end(last);
    // A whole body the socket did not take at once (a client that stopped reading) is watched like a held write.
    if (!this.finished && (this.res.writableNeedDrain || this.pending())) this.hold(sink);
  }

  private hold(sink: ResponseSink): void {
    this.release();
    this.holding = true;
    this.ctx.heldWrites.hold(this, sink.stallWatch());
  }

  /** Stops watching a held write (its stall watch cleared). */
  private release(): void {
    if (!this.holding) return;
    this.holding = false;
    this.ctx.heldWrites.release(this);
  }

  /** Moves when the client takes bytes: what the socket handed the kernel (HTTP/1.1), this stream's sent bytes (h2). */
  progress(): number {
    if (this.h2) return this.sent - (this.req as Http2ServerRequest).stream.bufferSize;
    const socket = this.req.socket as (Socket & { _handle?: { writeQueueSize?: number } }) | null;
    // bytesWritten counts what waits in libuv's queue too; writeQueueSize is that part.
    return socket === null ? 0 : socket.bytesWritten - (socket._handle?.writeQueueSize ?? 0);
  }

  /** Bytes of the answer still wait for the client. */
  private pending(): boolean {
    if (this.h2) return (this.req as Http2ServerRequest).stream.bufferSize > 0;
    const socket = this.req.socket as (Socket & { _handle?: { writeQueueSize?: number } }) | null;
    return socket !== null && (socket.writableLength > 0 || (socket._handle?.writeQueueSize ?? 0) > 0);
  }

  /**
   * h2's 'finish' means END_STREAM was queued in nghttp2, not sent; a draining worker exits
   * once its last answer ended, so an answer ends when its stream closed. A stream closed
   * before 'finish' is the client's abort ('close' of the response).
   */
  private streamClosed(): void {
    // A stream the client reset (a cancelled gRPC call) before the response ended: node's
    // compatibility response may have said 'finish' first (Node 20), so 'close' alone misses it.
    if (!this.ended) return this.abort(true);
    const sink = this.whenSent;
    this.whenSent = null;
    if (sink === null || !this.finished) return;
    this.release();
    sink.responseCompleted();
  }

  private abort(reset = false): void {
    if (this.aborted || (this.finished && !reset)) return;
    this.aborted = true;
    this.gone = true;
    this.release();
    const cb = this.abortCb;
    this.abortCb = null;
    cb?.();
  }
}

/** Trailers as node's header object: a repeated name becomes a list. */
function trailerFields(trailers: Trailers): Record<string, string | string[]> {
  const fields: Record<string, string | string[]> = {};
  for (const [name, value] of trailers) {
    const had = fields[name];
    fields[name] = had === undefined ? value : Array.isArray(had) ? [...had, value] : [had, value];
  }
  return fields;
}
