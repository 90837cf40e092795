import type { Logger } from '../shared/logger.js';
import { storeDownLease, type ClusterLease, type ClusterRateLimits } from './cluster-rate-limits.js';
import type { RateLimitLeases } from './rate-limit-leases.js';
import type { WorkerPool } from './worker-pool.js';

/** Answers workers' rate-limit lease requests: node buckets here, cluster ones through Redis. */
export function serveLeases(pool: WorkerPool, leases: RateLimitLeases, cluster: ClusterRateLimits | null, log: Logger): void {
  let warned = false;
  pool.onWorkerMessage((_slot, msg, from) => {
    if (msg.type !== 'lease') return;
    // To the process that asked: during a replacement two share the slot.
    const answer = (r: ClusterLease) => {
      const flags = { ...(r.unavailable ? { unavailable: true as const } : {}), ...(r.unbacked ? { unbacked: true as const } : {}) };
      pool.sendTo(from, { type: 'lease', id: msg.id, granted: r.granted, retryAfterMs: r.retryAfterMs, remaining: r.remaining, ...flags });
    };
    if (!msg.cluster) return answer(leases.lease(msg.bucket, msg.rps, msg.burst, msg.returned ?? 0));
    if (cluster) return void cluster.lease(msg.bucket, msg.rps, msg.burst, msg.returned ?? 0, msg.cluster.onStoreDown).then(answer);
    // A cluster bucket on a gateway without worker.json redis: as if Redis were down.
    if (!warned) log.warn('rate-limit: a route counts with scope cluster, and worker.json has no redis; it follows its onStoreDown');
    warned = true;
    answer(storeDownLease(msg.cluster.onStoreDown));
  });
  setInterval(() => leases.sweep(60_000), 30_000).unref();
}
