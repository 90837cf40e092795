// Request framing the gateway accepts (RFC 9112 §6.3), checked before a request is routed or read.

const CHUNKED_LAST = /(?:^|,)[ \t]*chunked[ \t]*$/i;

/**
 * A request's framing is acceptable: no Transfer-Encoding (''), or one whose last coding
 * is chunked. uWS reads any Transfer-Encoding as chunked; RFC 9112 §6.3 wants 400 and close.
 */
export function framingOk(transferEncoding: string): boolean {
  return transferEncoding === '' || CHUNKED_LAST.test(transferEncoding);
}
