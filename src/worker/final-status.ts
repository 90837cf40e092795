import { CLIENT_LEFT } from '../steps/step.js';

/**
 * The status a request ended with: the one its metrics, access log lines, trace, done
 * hooks (circuit breaker, concurrency limit, access-log step) all read. Decided here, called
 * from one place: ExchangeEnd.settle, once, when the exchange settles. A fixed reply written
 * whole from the engine's request callback has no Exchange and no decision: its status is the
 * one written (the client cannot leave between the callback and the write).
 *  - The client left before the response completed, even after its head went out, or took
 *    none of a held write for `limits.sendTimeoutMs` (the gateway closed on it): 499. A
 *    response completed once the engine took its last byte (docs/observability.md says which).
 *  - The gateway cut a response after its head because the upstream failed mid-answer:
 *    that failure's status (`cut`: 502, 504, …), which an envelope would have carried.
 *  - Otherwise the status sent.
 */
export function finalStatus(sent: number, clientLeft: boolean, cut = 0): number {
  return clientLeft ? CLIENT_LEFT : cut !== 0 ? cut : sent;
}
