import type { Volume } from '../store/volume.js';
import type { FleetFollower } from './fleet-follower.js';
import type { ClusterRateLimits } from './cluster-rate-limits.js';
import type { WorkerPool } from './worker-pool.js';
import type { Logger } from '../shared/logger.js';
import type { EntityRepo } from '../store/entity-repo.js';
import type { GenerationRepo } from '../store/generation-repo.js';
import type { Publisher } from './publisher.js';
import type { PluginRepo } from '../store/plugin-repo.js';
import type { KeyRepo } from '../store/key-repo.js';
import type { AuditRepo } from '../store/audit-repo.js';
import type { KeyUsage } from '../admin/keys/key-usage.js';
import type { SubKeyRing } from '../admin/keys/sub-key-ring.js';
import type { AuthThrottle } from '../admin/auth-throttle.js';
import type { TenantQuotas } from '../admin/tenant-quotas.js';
import type { DataMetricsTotals } from './data-metrics-totals.js';
import type { HealthChecks } from './health-checks.js';
import type { OutlierEjection } from './outlier-ejection.js';
import type { InFlightQuery } from './in-flight-query.js';
import type { WorkerLoadQuery } from './worker-load-query.js';
import type { SecretBox } from '../shared/secret-box.js';
import type { PathPolicy } from '../shared/normalize-path.js';
import type { Readiness } from './readiness.js';

/** The supervisor's state, as admin handlers see it. */
export interface Services {
  version: string;
  startedAt: number;
  volume: Volume;
  pool: WorkerPool;
  log: Logger;
  entities: EntityRepo;
  generations: GenerationRepo;
  plugins: PluginRepo;
  publisher: Publisher;
  /** The active health checks (supervisor-side probes of cluster targets). */
  health: HealthChecks;
  /** Outlier ejection (passive health), decided from the workers' reports. */
  outliers: OutlierEjection;
  /** The data plane's counters, summed over the workers' shipments. */
  dataMetrics: DataMetricsTotals;
  /** Requests in flight per target of a cluster, asked of the workers. */
  inFlight: InFlightQuery;
  /** Each worker's connections and the generations it still serves, asked of the workers. */
  workerLoad: WorkerLoadQuery;
  /** Seals cert private keys at rest (worker.json secrets.keyEnv); null: stored as sent. */
  secretBox: SecretBox | null;
  keys: KeyRepo;
  keyUsage: KeyUsage;
  subKeys: SubKeyRing;
  audit: AuditRepo;
  throttle: AuthThrottle;
  quotas: TenantQuotas;
  /** How request paths are normalised before routing (worker.json paths), for explain. */
  paths: PathPolicy;
  /** This node among the nodes of a postgres:// volume; null on SQLite (one node). */
  fleet: FleetFollower | null;
  /** Fleet-wide rate-limit buckets in worker.json's Redis; null without it. */
  clusterLimits: ClusterRateLimits | null;
  /** The node's readiness (/readyz): its workers on the current generation, its store answering. */
  readiness: Readiness;
}
