import type { Trailers } from '../engine/contract.js';
import type { ErrorCode } from '../../shared/errors.js';
import { CLIENT_LEFT } from '../../steps/step.js';
import { grpcMessage, grpcStatusOf, grpcTimeoutMs } from './grpc-status.js';
import { grpcWebMode, grpcWebResponseMode, type GrpcWebMode } from './grpc-web-mode.js';


/**
 * What a request is as a gRPC call, made only for one (its content-type is gRPC's): how
 * the gateway's own refusals are written, its deadline, and its grpc-status as the
 * client got it, which metrics, the access log and the trace report beside the HTTP status.
 */
export class GrpcCall {
  /** The call's grpc-status as the client got it: the upstream's, or the gateway's own; null while unknown. */
  status: number | null = null;
  /** gRPC-Web (HTTP/1.1 or h2 from a browser): the status travels in the head or the body, never in trailers. */
  readonly web: GrpcWebMode | null;
  /** The content type answers carry: the request's, without parameters. */
  readonly contentType: string;
  /**
   * Its route carries gRPC (route `grpc`): only then does the call live by its own deadline
   * (the cluster's waits and the body gap bound do not apply). The header alone decides how
   * refusals are written, never which bounds hold: a client cannot lift them by its content-type.
   */
  routed = false;
  /** A gRPC-Web call its route translates: the upstream speaks gRPC (route `grpc: {web: true}`). */
  translate = false;
  /** How a translated call's answer is encoded: the request's mode, or text when its Accept asks for it. */
  responseMode: GrpcWebMode = 'binary';
  private deadline: NodeJS.Timeout | null = null;

  constructor(
    requestType: string,
    /** It came over h2, where trailers reach the client (HTTP/1.1 engines write none). */
    readonly h2: boolean,
  ) {
    this.contentType = requestType.split(';', 1)[0]!.trim();
    this.web = grpcWebMode(this.contentType);
  }

  /** Its route translates it (a gRPC-Web call on a `grpc: {web: true}` route); `accept`: the request's Accept. */
  translateWeb(accept: string | undefined): void {
    this.translate = true;
    this.responseMode = grpcWebResponseMode(this.web!, accept);
  }

  /** The `grpc-service` and `grpc-method` of a path `/package.Service/Method` (trace attributes). */
  static methodOf(path: string): { service: string; method: string } | null {
    const slash = path.indexOf('/', 1);
    return path.charCodeAt(0) === 47 && slash > 1 ? { service: path.slice(1, slash), method: path.slice(slash + 1) } : null;
  }

  /**
   * Starts the deadline a `grpc-timeout` header gives (the request's own, parsed once):
   * `expired` runs when it passes first. Returns the deadline in ms, or null without one.
   */
  startDeadline(header: string | undefined, expired: () => void): number | null {
    const ms = grpcTimeoutMs(header);
    if (ms === null) return null;
    this.deadline = setTimeout(expired, ms);
    return ms;
  }

  /** The call ended: its deadline no longer runs. */
  stop(): void {
    if (this.deadline !== null) clearTimeout(this.deadline);
    this.deadline = null;
  }

  /**
   * The status its metrics, access log line and span report once the call ended with
   * `finalStatus`: none (null) when its client left before the answer's end (499), even if
   * the upstream's status had arrived by then, since the client never read it.
   */
  statusAtEnd(finalStatus: number): number | null {
    return finalStatus === CLIENT_LEFT ? null : this.status;
  }

  /** Reads grpc-status from an upstream's head (a trailers-only answer) or trailers, as flat `name, value` pairs. */
  upstreamFields(raw: readonly (string | Buffer)[] | null): void {
    if (raw === null) return;
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const name = raw[i]!;
      if (name.length === 11 && name.toString().toLowerCase() === 'grpc-status') {
        const n = Number(raw[i + 1]!.toString());
        if (Number.isInteger(n) && n >= 0) this.status = n;
      }
    }
  }

  /**
   * A refusal as this call's client reads it: HTTP 200 and the content type, with
   * grpc-status and grpc-message as trailers (h2 gRPC) or in the head (gRPC-Web, and a
   * gRPC request over HTTP/1.1, which has no trailers here).
   */
  refusal(httpStatus: number, code: ErrorCode | null, traceId: string, message?: string): { head: [string, string][]; trailers: Trailers | null } {
    const status = grpcStatusOf(httpStatus);
    this.status = status;
    const fields: [string, string][] = [
      ['grpc-status', String(status)],
      ['grpc-message', grpcMessage(code, traceId, message)],
    ];
    const type: [string, string] = ['content-type', this.contentType];
    return this.h2 && this.web === null ? { head: [type], trailers: fields } : { head: [type, ...fields], trailers: null };
  }
}
