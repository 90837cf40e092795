import type { Dispatcher } from 'undici';
import { HandlerWrapper } from '../handler-wrapper.js';
import { grpcWebContentType, isGrpcContentType, type GrpcWebMode } from './grpc-web-mode.js';
import { GrpcWebTextEncoder } from './grpc-web-text-encoder.js';
import { trailerFrame } from './grpc-web-trailers.js';
import { grpcMessage, grpcStatusOf } from './grpc-status.js';
import type { GrpcCall } from './grpc-call.js';

const CONTENT_TYPE = Buffer.from('content-type');
const GRPC_STATUS = Buffer.from('grpc-status');
const GRPC_MESSAGE = Buffer.from('grpc-message');
/** Names the head never passes on as they came: the body's length changes, the type is rewritten. */
const DROPPED = new Set(['content-length', 'content-type']);

/** What a gRPC answer that ends without any status reads as (grpc-js says the same: UNKNOWN). */
const UNKNOWN = 2;
const NO_STATUS = ['grpc-status', String(UNKNOWN), 'grpc-message', grpcMessage(null, '', 'upstream answer ended without grpc-status')];

/**
 * The upstream's gRPC answer turned into a gRPC-Web one for the client, wrapped around the
 * handler that writes to the client (undici's handler callbacks):
 *  - the head: Content-Type the client's gRPC-Web type (`mode`), no Content-Length;
 *    a trailers-only answer (grpc-status already in the head, which gRPC-Web allows) goes
 *    on as it is; an answer that is not gRPC (not 200, or not `application/grpc…`)
 *    becomes trailers-only, its status mapped to a gRPC status and its body dropped, as
 *    Envoy's grpc_web filter does, since a gRPC-Web client could not read that body;
 *  - the body: binary as it is; text base64-encoded (grpc-web-text-encoder.ts);
 *  - the trailers: one trailer frame at the end of the body, then the end with no
 *    HTTP trailers (browsers cannot read those).
 * Backpressure is the inner handler's: onData returns its answer. The trailer frame is
 * written from onComplete even while the upstream is paused: one small write.
 *
 * Access-Control-Expose-Headers (a browser script reads grpc-status and grpc-message of a
 * trailers-only answer only when they are exposed) is the cors step's business, not this one's.
 */
export class GrpcWebResponse<H extends Dispatcher.DispatchHandler = Dispatcher.DispatchHandler> extends HandlerWrapper<H> {
  private readonly encoder: GrpcWebTextEncoder | null;
  /** The head carried grpc-status (trailers-only): no trailer frame is owed. */
  private statusInHead = false;
  /** The answer was not gRPC: its body does not go to the client. */
  private dropBody = false;

  constructor(
    inner: H,
    private readonly mode: GrpcWebMode,
    /** The call whose status the client reads: a status made here is the one it got (metrics, access log, trace). */
    private readonly call: Pick<GrpcCall, 'status'> | null = null,
  ) {
    super(inner);
    this.encoder = mode === 'text' ? new GrpcWebTextEncoder() : null;
  }

  override onHeaders(statusCode: number, raw: Buffer[], resume: () => void, statusMessage: string): boolean {
    let contentType: string | undefined;
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const name = raw[i]!.toString('latin1').toLowerCase();
      if (name === 'content-type') contentType = raw[i + 1]!.toString('latin1');
      else if (name === 'grpc-status') this.statusInHead = true;
    }
    this.dropBody = !this.statusInHead && !(statusCode === 200 && isGrpcContentType(contentType));
    const head: Buffer[] = [];
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const name = raw[i]!.toString('latin1').toLowerCase();
      if (DROPPED.has(name) || (this.dropBody && name === 'content-encoding')) continue;
      head.push(raw[i]!, raw[i + 1]!);
    }
    if (this.dropBody) {
      this.statusInHead = true;
      const status = grpcStatusOf(statusCode);
      if (this.call !== null) this.call.status = status;
      head.push(GRPC_STATUS, Buffer.from(String(status)));
      head.push(GRPC_MESSAGE, Buffer.from(grpcMessage(null, '', `upstream answered HTTP ${statusCode}`)));
    }
    head.push(CONTENT_TYPE, Buffer.from(grpcWebContentType(contentType, this.mode), 'latin1'));
    return this.inner.onHeaders!(statusCode, head, resume, statusMessage);
  }

  override onData(chunk: Buffer): boolean {
    if (this.dropBody) return true;
    if (this.encoder === null) return this.inner.onData!(chunk);
    const text = this.encoder.encode(chunk);
    return text.length === 0 ? true : this.inner.onData!(Buffer.from(text, 'latin1'));
  }

  /** `trailers`: flat pairs, strings or (from undici's HTTP/1 parser) Buffers. */
  override onComplete(trailers: (string | Buffer)[] | null): void {
    if (!this.dropBody) {
      const hasTrailers = trailers !== null && trailers.length > 0;
      if (!hasTrailers && !this.statusInHead && this.call !== null) this.call.status = UNKNOWN;
      const frame = hasTrailers ? trailerFrame(trailers) : this.statusInHead ? null : trailerFrame(NO_STATUS);
      if (this.encoder !== null) {
        const text = this.encoder.end() + (frame === null ? '' : frame.toString('base64'));
        if (text.length > 0) this.inner.onData!(Buffer.from(text, 'latin1'));
      } else if (frame !== null) {
        this.inner.onData!(frame);
      }
    }
    this.inner.onComplete!(null);
  }
}
