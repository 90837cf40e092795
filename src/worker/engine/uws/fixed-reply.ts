// The fixed replies written straight from uWS's request callback (directResponse,
// redirect, envelopes): no Exchange, since nothing awaits.
import type { HttpResponse } from './uws.js';
import { bodylessHead, type StaticReply } from '../../response-head.js';

/**
 * Answers from inside the uWS request callback, where uWS has already corked the
 * socket: no Exchange, no header copy, no abort handler (nothing awaits).
 */
export function replyStatic(res: HttpResponse, r: StaticReply, close: boolean, head: boolean, idEcho = ''): void {
  if (head || r.bodyless) {
    // A HEAD answer reports the body's length and never carries it (RFC 9110 §9.3.2).
    res.writeStatus(bodylessHead(r.headOnly + idEcho, undefined, close));
    res.endWithoutBody(); // never with arguments: see bodylessHead
    return;
  }
  res.writeStatus(idEcho === '' ? r.head : r.head + idEcho);
  res.end(r.body, close);
}
