import type { ErrorCode } from '../shared/errors.js';
import { ExchangeEnd } from './exchange-end.js';

/**
 * A gRPC call's own answers (the request's GrpcCall, grpc/grpc-call.ts, says how they are
 * written): a refusal as a grpc-status, its deadline, and the end of a call whose
 * messages are flowing (a deadline, a drain). The Exchange (exchange.ts) is this with its phases.
 */
export abstract class ExchangeGrpc extends ExchangeEnd {
  /** Neither answered nor left: an answer can still be written. */
  get answerable(): boolean {
    return !this.aborted && !this.done;
  }

  /** The request's work ended (exchange.ts). */
  abstract finish(): void;
  /** The id an error envelope carries (exchange.ts). */
  abstract traceId(): string;

  /** A gRPC call's refusal: HTTP 200 with the grpc-status `httpStatus` maps to (grpc/grpc-call.ts), then finishes. */
  replyGrpc(httpStatus: number, code: ErrorCode | null, traceId: string): void {
    if (this.answerable) {
      const r = this.grpc!.refusal(httpStatus, code, traceId);
      if (r.trailers === null) this.sendHead(200, '', r.head);
      else {
        this.writeHead(200, undefined, r.head);
        this.end(r.trailers);
      }
    }
    this.finish();
  }

  /**
   * The call's grpc-timeout starts: when it passes first, DEADLINE_EXCEEDED as its refusal,
   * or as trailers after the messages already relayed; then its upstream stream is
   * cancelled, as the client's leaving would (the upstream sees the call cancelled).
   */
  protected startDeadline(): void {
    this.grpc!.startDeadline(this.header('grpc-timeout'), () => this.endGrpc(504, 'Svc.Data.DeadlineExceeded'));
  }

  /**
   * Ends a gRPC call whose messages are flowing with `code`'s grpc-status in its trailers
   * (a deadline, a drain's end); its upstream is cancelled. Not for gRPC-Web, whose
   * status must be in the body: its connection is cut instead.
   */
  endGrpc(httpStatus: number, code: ErrorCode): void {
    if (!this.answerable) return;
    const g = this.grpc!;
    if (!this.headersSent || g.web !== null || !g.h2) {
      if (!this.headersSent) this.replyGrpc(httpStatus, code, this.traceId());
      else this.close(httpStatus);
    } else this.end(g.refusal(httpStatus, code, this.traceId()).trailers);
    this.cancelWork();
    this.finish();
  }

}
