import type { Dispatcher } from 'undici';
import { responseHeaders } from './upstream-head.js';
import type { RequestOwner } from './request-owner.js';
import { errorCode, UpstreamCodingError } from './upstream-failure.js';
import { StepHookError } from './step-hook-error.js';
import { ERRORS } from '../shared/errors.js';
import { isBodylessStatus } from './response-head.js';
import { relayedTrailers } from './trailers.js';
import { grpcStatusFields } from './grpc/grpc-status.js';
import type { Trailers } from './engine/contract.js';

/** A response head read once from undici's raw pairs (upstream-head.ts). */
export type UpstreamHead = ReturnType<typeof responseHeaders>;

/**
 * The innermost handler of an attempt: streams the upstream's answer to the client as
 * it comes, the head held until the first body bytes (one send), the body with
 * backpressure both ways; a failure becomes the client's envelope, or a cut connection
 * once the head went out.
 *
 * It implements undici's own callbacks (onConnect, onHeaders, onData, onComplete,
 * onError), which undici 7 calls directly: the newer onResponse* interface costs an
 * adapter and a parsed head object per request.
 */
export class RelayHandler implements Dispatcher.DispatchHandler {
  private abortUpstream: ((err?: Error) => void) | null = null;
  private resumeUpstream: (() => void) | null = null;
  private total: number | null = null;
  private status = 0;
  /** Body bytes received so far (counted only for a known length). */
  private received = 0;
  private bodyless = false;
  /** Resumes the upstream once the client took a chunk it could not take at once (made on first need). */
  private drained: (() => void) | null = null;
  /** A gRPC answer's status fields from a trailers-only head, for an h2 client's trailers. */
  private statusFields: Trailers | null = null;

  constructor(private readonly life: RequestOwner) {}

  onConnect(abort: (err?: Error) => void): void {
    this.abortUpstream = abort;
  }

  onHeaders(statusCode: number, raw: Buffer[], resume: () => void, statusMessage: string): boolean {
    return this.relayHead(statusCode, responseHeaders(raw), resume, statusMessage);
  }

  /** onHeaders with the head already read (a collect handler that chose not to gather passes it on). */
  relayHead(statusCode: number, head: UpstreamHead, resume: () => void, statusMessage: string): boolean {
    this.resumeUpstream = resume;
    if (head.foreignCoding) {
      // A transfer coding undici does not undo (`gzip, chunked`): 502, as nginx and Envoy answer.
      this.abortUpstream?.(new UpstreamCodingError());
      return false;
    }
    const ex = this.life;
    const flow = ex.flow;
    this.total = head.length;
    this.status = statusCode;
    // 1xx never get here: Forwarding drops them.
    this.bodyless = ex.method === 'HEAD' || isBodylessStatus(statusCode);
    // Only an h2 gRPC client reads trailers; a translated gRPC-Web answer carries its status in the body.
    if (ex.grpc !== null && ex.grpc.h2 && ex.grpc.web === null) this.statusFields = grpcStatusFields(head.headers);
    if (flow?.hasResponseHooks) {
      const edited = { status: statusCode, headers: head.headers };
      try {
        flow.applyResponseHooks(edited);
      } catch (err) {
        // A step's hook broke on this answer: its failure (logged, counted), answered in onError as StepFailed.
        if (!(err instanceof StepHookError)) throw err;
        ex.stepHookFailed(err);
        this.abortUpstream?.(err);
        return false;
      }
      ex.writeHead(edited.status, edited.status === statusCode ? statusMessage : undefined, edited.headers);
      return true;
    }
    ex.writeHead(statusCode, statusMessage, head.headers);
    return true;
  }

  onData(chunk: Buffer): boolean {
    const ex = this.life;
    if (this.bodyless || ex.aborted) return true;
    // false pauses the upstream socket until drained() resumes it. Once the answer
    // completed, its connection may carry another request: a late drain must not resume that one.
    const more = ex.write(chunk, this.total, (this.drained ??= () => (this.life.finished ? undefined : this.resumeUpstream?.())));
    // Never pause undici on the last bytes of a known length: undici 7 asserts it is not
    // paused when the upstream closes right after them; the Exchange sends the tail itself.
    if (this.total !== null && (this.received += chunk.length) >= this.total) return true;
    return more;
  }

  onComplete(trailers: readonly (string | Buffer)[] | null): void {
    const ex = this.life;
    // A 204 carries no Content-Length (RFC 9110 §8.6); HEAD and 304 report the upstream's.
    if (this.bodyless) ex.endWithoutBody(this.status === 204 ? undefined : (this.total ?? undefined));
    // A trailers-only gRPC answer (its status in the head): node's h2 server always sends the
    // head without END_STREAM, and gRPC clients read a status only at the stream's end, so
    // it goes out as trailers too. A no-op when the last write already completed a known length.
    else ex.end(relayedTrailers(trailers) ?? this.statusFields);
    this.life.finish();
  }

  onError(err: Error): void {
    const life = this.life;
    if (!life.answerable) return life.finish();
    if (life.headersSent) {
      // The client cannot be told with a status any more: it sees the connection cut, and
      // the request ends with the status the envelope would have had (final-status.ts).
      life.env.log.warn({ code: (err as { code?: string }).code, err: err.message, path: life.path }, 'upstream failed after the response head was sent; client connection cut');
      life.close(ERRORS[errorCode(err)].status);
      return life.finish();
    }
    life.replyError(life.flow?.bodyTooLarge ? 'Svc.Data.TooLarge' : errorCode(err));
  }
}
