import { connectFailed, connectionClosed } from './upstream-failure.js';

/**
 * When a request whose attempt failed before the upstream's answer head arrived may go
 * out once more, and where. Pure: the proxy stage (proxy.ts) acts on the answer.
 */

/** RFC 9110 §9.2.2: sending one of these twice has the effect of sending it once. */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE']);

export interface FailedAttempt {
  /** What the attempt failed with (upstream-failure.ts classifies it). */
  err: Error;
  method: string;
  /** No body, or one held whole (a Buffer): it can be sent again. A streamed body cannot, once read. */
  replayable: boolean;
  /** undici handed the request to a socket (its onConnect): from then on bytes may have reached the upstream. */
  written: boolean;
  /** The answer's head arrived: the upstream acted on the request. */
  answered: boolean;
  /** The connection had carried an earlier request (a keep-alive connection the upstream may have closed since). */
  reused: boolean;
  /** This request was already re-sent, or already failed over, once. */
  resent: boolean;
  failedOver: boolean;
  /** The cluster has a target other than the one that failed. */
  otherTarget: boolean;
}

/**
 * - `resend`: on a new connection to the same target. For an idempotent request with a
 *   replayable body whose reused connection was closed before the answer head: the
 *   upstream closed an idle keep-alive connection as the request went out (nginx re-sends
 *   these too).
 * - `failover`: to another target of the cluster. When nothing was sent (connect refused,
 *   timed out, unreachable), whatever the method and body; and for an idempotent,
 *   replayable request whose connection was closed before the answer head otherwise.
 * - null: the failure is the client's answer.
 * Each at most once per request, so a request goes out at most three times (retry step apart).
 */
export function sendAgain(f: FailedAttempt): 'resend' | 'failover' | null {
  if (f.answered) return null;
  const notConnected = connectFailed(f.err);
  if (!notConnected && !connectionClosed(f.err)) return null;
  const failover = f.otherTarget && !f.failedOver ? 'failover' : null;
  if (!f.written) return failover; // no byte went out, and a streamed body was never read
  if (notConnected || !IDEMPOTENT.has(f.method) || !f.replayable) return null;
  if (f.reused && !f.resent) return 'resend';
  return failover;
}
