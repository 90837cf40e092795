/** At most one warning a minute about the collector, whatever fails how often. */
const WARN_EVERY_MS = 60_000;

/**
 * How export failures and dropped spans reach the worker's log: one warn line a minute at most, with how many were held back since.
 */
export function throttledWarn(log: { warn(obj: object, msg: string): void }): (message: string) => void {
  let last = -Infinity;
  let skipped = 0;
  return (message: string) => {
    const now = Date.now();
    if (now - last < WARN_EVERY_MS) {
      skipped++;
      return;
    }
    last = now;
    log.warn({ detail: message, suppressedSinceLast: skipped }, 'tracing: spans are not reaching the collector (at most one such warning a minute)');
    skipped = 0;
  };
}
