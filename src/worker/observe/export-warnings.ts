import type { DiagLogFunction } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';

/** At most one warning a minute about the collector, whatever fails how often. */
const WARN_EVERY_MS = 60_000;

/** The exporter, with its failures told to the worker's log (through throttledWarn). */
export class WarningExporter implements SpanExporter {
  constructor(
    private readonly inner: SpanExporter,
    private readonly warn: (msg: string) => void,
  ) {}

  export(spans: ReadableSpan[], done: (r: ExportResult) => void): void {
    this.inner.export(spans, (r) => {
      if (r.code !== ExportResultCode.SUCCESS) this.warn(`span export failed: ${r.error?.message ?? 'unknown error'}`);
      done(r);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

/**
 * How the SDK's complaints (failed exports, dropped spans, its diag warnings) reach the
 * worker's log: one warn line a minute at most, with how many were held back since.
 */
export function throttledWarn(log: { warn(obj: object, msg: string): void }): DiagLogFunction {
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
