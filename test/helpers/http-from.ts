import { request, type HttpResult, type RequestOptions } from './http.js';

/**
 * request() (see http.ts) from a chosen local source address: Linux loopback accepts the
 * whole 127/8, so `localAddress: '127.0.0.2'` makes the server see a different socket
 * peer than the default 127.0.0.1. One fresh TCP connection per call (agent:false).
 */
export function requestFrom(localAddress: string, url: string, opts: RequestOptions = {}): Promise<HttpResult> {
  return request(url, { ...opts, localAddress });
}
