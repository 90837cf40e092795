import type { RequestHead } from './engine/contract.js';
import { framingOk } from './request-framing.js';
import { isIdentityHeader } from './client-address.js';

/** What the copy of a request's headers tells, as bits of one number (no object per request). */
export const HAS_BODY = 1; // Content-Length other than 0, or Transfer-Encoding
export const BAD_FRAMING = 2; // a Transfer-Encoding other than chunked alone, more than one Content-Length or Transfer-Encoding line, or a Content-Length not all digits
export const HOST_REPEATED = 4; // more than one Host header
export const IDENTITY = 8; // the client named itself (an identity header, client-address.ts)
export const GRPC = 16; // a gRPC or gRPC-Web call (content-type application/grpc…)

const DIGITS = /^\d+$/;

/**
 * Copies the engine's request headers into `into` (flat `name, value, …`, names lower case), in
 * one pass that also drops names with an underscore and judges the framing, the Host count and the identity headers. The engine's
 * request head is valid only during the request callback.
 */
export function copyRequestHead(req: RequestHead, into: string[]): number {
  let flags = 0;
  let hosts = 0;
  let length = false;
  let coded = false;
  req.forEach((k, v) => {
    // Dropped as nginx does: CGI-style upstreams read `x_forwarded_for` as `x-forwarded-for`,
    // which would carry a client's own identity header past the strip (client-address.ts).
    if (k.includes('_')) return;
    into.push(k, v);
    if (k === 'host') hosts++;
    else if (k === 'content-length') {
      if (v !== '0') flags |= HAS_BODY;
      // uWS frames by the first of several; a front proxy may take another (RFC 9112 §6.3).
      // uWS refuses `+5` or `5, 5` itself but lets an empty value through.
      if (length || !DIGITS.test(v)) flags |= BAD_FRAMING;
      length = true;
    } else if (k === 'transfer-encoding') {
      flags |= HAS_BODY;
      // uWS hands over the first of several lines; together they would be a list (`chunked, chunked`).
      if (coded || !framingOk(v)) flags |= BAD_FRAMING;
      coded = true;
    } else if (k === 'content-type') {
      if (isGrpcType(v)) flags |= GRPC;
    } else if (isIdentityHeader(k)) flags |= IDENTITY;
  });
  return hosts > 1 ? flags | HOST_REPEATED : flags;
}

/** `application/grpc`, with or without a suffix or parameters (`+proto`, `-web`, `-web-text`). */
export function isGrpcType(contentType: string): boolean {
  return contentType.startsWith('application/grpc') && (contentType.length === 16 || '+-;'.includes(contentType[16]!));
}
