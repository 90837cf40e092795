import type { Logger } from '../shared/logger.js';
import type { UpstreamTlsError } from '../shared/upstream-tls.js';

/** At most one line per target in this window: a target with a bad certificate fails every new connection. */
export const TLS_LOG_WINDOW_MS = 10_000;

/**
 * The warn line of a failed TLS connection to a cluster target, saying why (Node's code and
 * message: an unknown CA, a name mismatch, an alert), per worker and target at most once
 * per TLS_LOG_WINDOW_MS; the next line counts the failures it did not log.
 */
export class TlsFailureLog {
  private readonly last = new Map<string, { at: number; suppressed: number }>();

  constructor(
    private readonly log: Logger,
    private readonly cluster: string,
  ) {}

  failed(err: UpstreamTlsError): void {
    const now = Date.now();
    const seen = this.last.get(err.target);
    if (seen && now - seen.at < TLS_LOG_WINDOW_MS) {
      seen.suppressed++;
      return;
    }
    const suppressed = seen?.suppressed ?? 0;
    this.last.set(err.target, { at: now, suppressed: 0 });
    this.log.warn({ cluster: this.cluster, target: err.target, reason: err.reason, err: err.message, ...(suppressed ? { suppressed } : {}) }, 'upstream TLS failed');
  }
}
