/**
 * The gRPC status for an HTTP answer that is not gRPC (github.com/grpc/grpc
 * doc/http-grpc-status-mapping.md), as gRPC clients and Envoy's grpc_web filter map it.
 */
export function grpcStatusOfHttp(status: number): number {
  switch (status) {
    case 400: return 13; // INTERNAL
    case 401: return 16; // UNAUTHENTICATED
    case 403: return 7; // PERMISSION_DENIED
    case 404: return 12; // UNIMPLEMENTED
    case 429:
    case 502:
    case 503:
    case 504: return 14; // UNAVAILABLE
    default: return 2; // UNKNOWN
  }
}
