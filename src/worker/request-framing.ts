// Request framing the gateway accepts (RFC 9112 §6.1, §6.3), checked before a request is routed or read.

const CHUNKED_ONLY = /^[ \t]*chunked[ \t]*$/i;

/**
 * A request's framing is acceptable: no Transfer-Encoding (''), or chunked alone. uWS reads
 * any Transfer-Encoding as chunked and decodes nothing else, so another coding (`gzip,
 * chunked`) would reach the upstream undecoded and unmarked, and `chunked, chunked` decoded
 * once; RFC 9112 §6.3 wants 400 and close when chunked is not last.
 */
export function framingOk(transferEncoding: string): boolean {
  return transferEncoding === '' || CHUNKED_ONLY.test(transferEncoding);
}
