import type { QueryPair } from '../../shared/url-query.js';

/**
 * What a finished request tells its observers (the metrics, the access log): read once,
 * when the request ended, from the Exchange and its life (or, for a fixed answer
 * written from the request callback, from a record made there).
 */
export interface RequestRecord {
  /** Epoch milliseconds at arrival. */
  readonly startedAt: number;
  readonly durationMs: number;
  /** The request's id ('' when worker.json `requestId.enabled` is false). */
  readonly requestId: string;
  /** The matched route's tenant and name; '' for a request no route took (404, a refused request). */
  readonly tenant: string;
  readonly route: string;
  readonly method: string;
  /** The normalised path, without the query. */
  readonly path: string;
  readonly query: string | null;
  /** The query's pairs (url-query.ts): the request's own when a step parsed them already. */
  readonly queryPairs: readonly QueryPair[];
  /** The request's final status (final-status.ts): the status sent, 499 when the client left before the answer completed. */
  readonly status: number;
  /** A gRPC call's grpc-status as its client got it (grpc/grpc-call.ts); null for any other request, and for a call that got none. */
  readonly grpcStatus: number | null;
  readonly bytesReceived: number;
  readonly bytesSent: number;
  /** The upstream target (host:port) of the last attempt, and its time to first byte; null without one. */
  readonly upstream: string | null;
  readonly upstreamMs: number | null;
  /** The client's address (behind a trusted proxy, the one it reports). */
  readonly client: string;
  readonly userAgent: string | undefined;
  readonly referer: string | undefined;
  /** The W3C trace id the request belongs to (null when none was started or continued). */
  readonly traceId: string | null;
}
