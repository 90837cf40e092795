import { pipeline, type Readable } from 'node:stream';
import { grpcUpstreamContentType, type GrpcWebMode } from './grpc-web-mode.js';
import { decodeGrpcWebText, GrpcWebTextDecoder } from './grpc-web-text-decoder.js';

/** Request headers that only the gRPC-Web hop reads, or whose value the translation changes. */
const DROPPED = new Set(['content-length', 'x-grpc-web', 'te']);

/**
 * A gRPC-Web request's upstream headers (flat `name, value, …` pairs with lower-case
 * names, as upstream-request-headers.ts builds them) turned into a gRPC request's:
 * Content-Type `application/grpc[+suffix]`, no Content-Length (a text body's length
 * changes, and gRPC frames itself), no `x-grpc-web` (the gRPC-Web client's marker,
 * meaningless upstream). The order is kept: a replaced traceparent stays last
 * (forwarding.ts); proxy.ts puts `te: trailers` first for every gRPC call.
 */
export function grpcWebUpstreamHeaders(headers: string[], _mode: GrpcWebMode): string[] {
  const out: string[] = [];
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i]!;
    if (DROPPED.has(name)) continue;
    out.push(name, name === 'content-type' ? grpcUpstreamContentType(headers[i + 1]!) : headers[i + 1]!);
  }
  return out;
}

/**
 * The request body as the upstream gets it: a binary body as it is; a text body
 * base64-decoded (a Buffer at once, a stream as it arrives). An invalid text body
 * throws (Buffer) or fails the returned stream (Readable) with GrpcWebTextError.
 */
export function grpcWebRequestBody(body: Buffer, mode: GrpcWebMode): Buffer;
export function grpcWebRequestBody(body: Readable, mode: GrpcWebMode): Readable;
export function grpcWebRequestBody(body: Buffer | Readable | null, mode: GrpcWebMode): Buffer | Readable | null;
export function grpcWebRequestBody(body: Buffer | Readable | null, mode: GrpcWebMode): Buffer | Readable | null {
  if (mode === 'binary' || body === null) return body;
  if (Buffer.isBuffer(body)) return decodeGrpcWebText(body);
  // pipeline destroys both sides on a failure either way: the client's body stops being read.
  return pipeline(body, new GrpcWebTextDecoder(), () => {});
}
