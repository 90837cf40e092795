import type { ObserveSettings } from '../../contracts/ipc.js';
import type { MetricsDelta } from '../../contracts/metrics.js';
import { TrustedProxies } from '../trusted-proxies.js';
import { DataMetrics } from './data-metrics.js';
import { RequestObserver, type RecordSink } from './observer.js';
import { RequestIds } from './request-ids.js';

/** Counts go to the supervisor this often (its /metrics lags by at most about this). */
export const SHIP_EVERY_MS = 1_000;

/** A worker's ids, meters and observer, from worker.json's settings; the meters ship themselves while counting. */
export function workerObservation(settings: ObserveSettings, trustedProxies: readonly string[], nextId: () => string, sink: RecordSink | null, ship: (delta: MetricsDelta) => void) {
  const meters = new DataMetrics();
  const ids = settings.requestId === null ? null : new RequestIds(settings.requestId, new TrustedProxies(trustedProxies), nextId);
  const observer = new RequestObserver(meters, settings.metrics, sink);
  if (settings.metrics) {
    setInterval(() => {
      const d = meters.take();
      if (d !== null) ship(d);
    }, SHIP_EVERY_MS).unref();
  }
  return { meters, ids, observer, counting: settings.metrics };
}
