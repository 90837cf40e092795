import { CLIENT_LEFT } from '../steps/step.js';

/**
 * The status a request ended with: the one its metrics, access log lines, trace, done
 * hooks (circuit breaker, concurrency limit, access-log step) all read. Decided once, by
 * its Exchange when it ends, and for a fixed reply by the data server as it writes it.
 *  - The client left before the response completed, even after its head went out: 499.
 *  - The gateway cut a response after its head because the upstream failed mid-answer:
 *    that failure's status (`cut`: 502, 504, …), which an envelope would have carried.
 *  - Otherwise the status sent.
 */
export function finalStatus(sent: number, clientLeft: boolean, cut = 0): number {
  return clientLeft ? CLIENT_LEFT : cut !== 0 ? cut : sent;
}
