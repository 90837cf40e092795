import type { Downstream, IdEcho, ResponseHead, ResponseSink, WebSocketPeer } from '../contract.js';
import { headBlock, statusLine, type StaticReply } from '../../response-head.js';
import { formatAddress } from './peer-address.js';
import { endBodyless, endWithTryEnd, fitsCork, writeChunked } from './cork-room.js';
import { replyStatic } from './fixed-reply.js';
import type { RequestCallback } from './request-callback.js';
import { upgradeLater, type HttpResponse, type us_socket_context_t } from './uws.js';

/** `\r\n<name>: <value>`: the request id's line after a head block. */
const echoLine = (id: IdEcho): string => (id === null ? '' : `\r\n${id[0]}: ${id[1]}`);

/** A head as uWS writes it: one block for one writeStatus call (response-head.ts headBlock). */
function headText(head: ResponseHead, id: IdEcho): string {
  return (head.block ?? headBlock(statusLine(head.status, head.reason || undefined), head.headers)) + echoLine(id);
}

/**
 * One request's downstream on uWS, under uWS's rules (docs/architecture.md, "uWS rules"):
 * every write corked, a head in one writeStatus, bodies through tryEnd/write + onWritable
 * within the cork buffer (cork-room.ts), a closing answer never written inside uWS's parse
 * (request-callback.ts).
 */
export class UwsDownstream implements Downstream {
  /** The client left, or the response ended: uWS's response object may not be touched. */
  private gone = false;
  /** Part of a known-length chunk waits for the socket (tryEnd was short; onWritable retries it). */
  private tailPending = false;
  /** The upload is paused: a write that may end the response resumes it, so its rest is read and dropped. */
  private paused = false;

  constructor(
    readonly res: HttpResponse,
    /** A WebSocket handshake's uWS context (res.upgrade needs it); null on any other request. */
    private readonly context: us_socket_context_t | null,
    /** The engine's: whether uWS is still in its request callback this turn. */
    private readonly inCallback: RequestCallback,
  ) {}

  remoteAddress(): string {
    return this.gone ? '' : formatAddress(this.res.getRemoteAddress());
  }

  /** uWebSockets.js does not show the peer certificate to JavaScript: worker.json refuses client certificates on this engine. */
  clientCertificate(): null {
    return null;
  }

  onAborted(cb: () => void): void {
    this.res.onAborted(() => {
      this.gone = true;
      cb();
    });
  }

  onData(cb: (chunk: ArrayBuffer | Buffer, last: boolean) => void): void {
    this.res.onData(cb);
  }

  pause(): void {
    this.paused = true;
    this.res.pause();
  }

  resume(): void {
    this.paused = false;
    this.res.resume();
  }

  private released(): void {
    if (this.paused && !this.gone) this.resume();
  }

  replyStatic(r: StaticReply, id: IdEcho, close: boolean, headOnly: boolean): void {
    replyStatic(this.res, r, close, headOnly, echoLine(id));
  }

  reply(head: ResponseHead, id: IdEcho, body: string | Buffer | null, contentLength: number | undefined, close: boolean, sink: ResponseSink): void {
    if (this.gone) return;
    // Inside uWS's parse a close is only a flag, and the bytes behind this request are read
    // as requests (after a framing refusal, a smuggled one): see request-callback.ts.
    if (close && this.inCallback.active) return void setImmediate(() => this.reply(head, id, body, contentLength, close, sink));
    const text = headText(head, id);
    const res = this.res;
    if (body === null) {
      endBodyless(res, text, contentLength, close);
      return this.completed(sink);
    }
    if (fitsCork(text.length, body)) {
      res.cork(() => {
        res.writeStatus(text);
        res.end(body, close);
      });
      return this.completed(sink);
    }
    // Too large for one cork (see cork-room.ts): tryEnd, the rest when writable. uWS's
    // tryEnd cannot close the connection, so the head asks the client to.
    endWithTryEnd(res, close ? `${text}\r\nconnection: close` : text, typeof body === 'string' ? Buffer.from(body) : body, () => this.completed(sink), sink.stallWatch());
  }

  write(head: ResponseHead | null, id: IdEcho, chunk: Buffer, total: number | null, close: boolean, onDrain: () => void, sink: ResponseSink): boolean {
    if (this.gone) return true;
    const text = head === null ? null : headText(head, id);
    const res = this.res;
    if (total === null) return writeChunked(res, chunk, text, onDrain, sink);
    let ok = true;
    res.cork(() => {
      if (text !== null) res.writeStatus(text);
      if (chunk.length === total && fitsCork(text === null ? 0 : text.length, chunk)) {
        // The whole body in one chunk that fits uWS's cork buffer (most answers): end()
        // takes it in one call and one send.
        res.end(chunk, close);
        return this.completed(sink);
      }
      const start = res.getWriteOffset();
      const [sent, finished] = res.tryEnd(chunk, total);
      if (finished) return this.completed(sink);
      if (sent) return;
      ok = false;
      this.tailPending = true;
      const watch = sink.stallWatch();
      watch.held(res.getWriteOffset());
      res.onWritable((offset) => {
        // uWS keeps calling this until another onWritable replaces it: once this chunk is
        // out, a later writable event has nothing of it to send.
        if (offset - start >= chunk.length) return true;
        this.released();
        const [retried, done] = res.tryEnd(chunk.subarray(offset - start), total);
        if (retried || done) this.tailPending = false;
        if (done) this.completed(sink);
        else if (retried) watch.clear(); // what waits next is the producer, not the client
        else watch.held(res.getWriteOffset());
        // The producer resumes after this callback, never inside it: uWS puts the callback
        // it is running back over any onWritable registered meanwhile, so the next chunk's
        // would be lost and its unsent tail skipped (test/streaming-small-socket-buffers).
        if (retried || done) setImmediate(onDrain);
        return retried;
      });
    });
    return ok;
  }

  end(head: ResponseHead | null, id: IdEcho, close: boolean): boolean {
    if (this.gone) return true;
    if (this.tailPending) return false;
    const text = head === null ? null : headText(head, id);
    const res = this.res;
    res.cork(() => {
      if (text !== null) res.writeStatus(text);
      // uWS writes a close asked at end() as a header line even after the head went out: only with a head.
      res.end(undefined, close && text !== null);
    });
    this.gone = true;
    return true;
  }

  close(): void {
    if (this.gone) return;
    this.gone = true;
    this.res.close();
  }

  upgrade(peer: WebSocketPeer, key: string, protocol: string, id: IdEcho): boolean {
    if (this.gone || this.context === null) return false;
    this.gone = true;
    // uWS writes its own 101 line only if none was written: this one carries the request id (headBlock's way).
    upgradeLater(this.res, { relay: peer }, key, protocol, this.context, id === null ? null : `101 Switching Protocols${echoLine(id)}`);
    return true;
  }

  private completed(sink: ResponseSink): void {
    this.gone = true;
    sink.responseCompleted();
  }
}
