import type { HttpRequest } from './uws.js';
import { framingOk } from './request-framing.js';
import { isIdentityHeader } from './client-address.js';

/** What the copy of a request's headers tells, read in the same pass. */
export interface RequestHead {
  /** A body is announced (Content-Length other than 0, or Transfer-Encoding). */
  hasBody: boolean;
  /** A Transfer-Encoding whose last coding is not chunked, or more than one Content-Length. */
  badFraming: boolean;
  /** More than one Host header. */
  hostRepeated: boolean;
  /** The client named itself (an identity header, client-address.ts). */
  identity: boolean;
}

/**
 * Copies uWS's request headers into `into` (flat `name, value, …`, names lower case), in
 * one pass that also judges the framing, the Host count and the identity headers. uWS's
 * request object is valid only during the request callback.
 */
export function copyRequestHead(req: HttpRequest, into: string[]): RequestHead {
  let hasBody = false;
  let badFraming = false;
  let identity = false;
  let hosts = 0;
  let length = false;
  req.forEach((k, v) => {
    into.push(k, v);
    if (k === 'host') hosts++;
    else if (k === 'content-length') {
      if (v !== '0') hasBody = true;
      // uWS frames by the first of several; a front proxy may take another (RFC 9112 §6.3).
      if (length) badFraming = true;
      length = true;
    } else if (k === 'transfer-encoding') {
      hasBody = true;
      if (!framingOk(v)) badFraming = true;
    } else if (isIdentityHeader(k)) identity = true;
  });
  return { hasBody, badFraming, hostRepeated: hosts > 1, identity };
}
