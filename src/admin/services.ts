import type { Volume } from '../store/volume.js';
import type { Logger } from '../shared/logger.js';
import type { EntityRepo } from '../store/entity-repo.js';
import type { GenerationRepo } from '../store/generation-repo.js';
import type { PluginRepo } from '../store/plugin-repo.js';
import type { KeyRepo } from '../store/key-repo.js';
import type { AuditRepo } from '../store/audit-repo.js';
import type { SecretBox } from '../shared/secret-box.js';
import type { PathPolicy } from '../shared/normalize-path.js';
import type { Exposition } from '../shared/metrics-exposition.js';
import type { CompiledGeneration, CompileIssue } from '../contracts/generation.js';
import type { GenerationMessage, WorkerLoad } from '../contracts/ipc.js';
import type { DryRunResult, PublishResult } from '../contracts/publish-results.js';
import type { ReadinessReport } from '../contracts/readiness.js';
import type { FleetNode, ProbedTarget, TargetHealth, WorkerRestartProgress, WorkerStatus } from '../contracts/node-status.js';
import type { KeyUsage } from './keys/key-usage.js';
import type { SubKeyRing } from './keys/sub-key-ring.js';
import type { AuthThrottle } from './auth-throttle.js';
import type { TenantQuotas } from './tenant-quotas.js';
import type { StepRegistry } from '../steps/step-registry.js';
import type { OidcSignIn } from './oidc/oidc-sign-in.js';

/**
 * The supervisor's state, as admin handlers see it. The parts the supervisor runs (worker
 * pool, publisher, health, queries to the workers, fleet) are named by what the handlers
 * call on them; the supervisor's classes implement these views.
 */
export interface Services {
  version: string;
  startedAt: number;
  volume: Volume;
  pool: WorkerPoolView;
  log: Logger;
  entities: EntityRepo;
  generations: GenerationRepo;
  plugins: PluginRepo;
  publisher: PublisherView;
  /** The active health checks (supervisor-side probes of cluster targets). */
  health: HealthView;
  /** Outlier ejection (passive health), decided from the workers' reports. */
  outliers: OutlierView;
  /** The key sets the supervisor fetches for the data plane (jwt-auth jwksUri/issuer): fetches and states, for /metrics. */
  keySets: { write(out: Exposition): void };
  /** The data plane's counters, summed over the workers' shipments. */
  dataMetrics: { write(out: Exposition): void };
  /** The steps the supervisor loaded (built-ins and worker.json's packages): plugin list, sys/steps, explain. */
  steps: StepRegistry;
  /** Requests in flight per target of a cluster, asked of the workers. */
  inFlight: { ask(cluster: string): Promise<Record<string, number>> };
  /** Each worker's connections and the generations it still serves, by slot, asked of the workers. */
  workerLoad: { ask(): Promise<Map<number, WorkerLoad>> };
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
  fleet: FleetView | null;
  /** Fleet-wide rate-limit buckets in worker.json's Redis; null without it. */
  clusterLimits: { readonly downAnswers: { allow: number; deny: number } } | null;
  /** `workers restart`: every worker replaced, one at a time. */
  workerRestart: WorkerRestartView;
  /** Workers' own alarms: event-loop stalls (by route and step) and replacements (by reason), for /metrics. */
  workerGuards: WorkerGuardsView;
  /** Console sign-in through an OpenID provider (admin.oidc), with its sessions; null: bearer tokens only. */
  oidc: OidcSignIn | null;
  /** The node's readiness: its workers on the current generation, its store answering; `latest` (/readyz) never waits on the store. */
  readiness: { check(): Promise<ReadinessReport>; latest(): ReadinessReport };
}

export interface WorkerPoolView {
  status(): WorkerStatus[];
}

export interface WorkerRestartView {
  /** Starts one (throws Svc.Workers.RestartRunning while one runs) and returns its progress so far. */
  start(): WorkerRestartProgress;
  /** The latest restart since the node started (null: none). */
  latest(): WorkerRestartProgress | null;
}

export interface WorkerGuardsView {
  stallCounts(): { tenant: string; route: string; step: string; n: number }[];
  replacementCounts(): Record<'stall' | 'heap' | 'restart', number>;
}

/** Publish, dry-run and rollback, one at a time. */
export interface PublisherView {
  current(): GenerationMessage | null;
  currentId(): number;
  dryRun(tenant: string): Promise<DryRunResult>;
  /** The tenant's next generation as it would compile, or its issues. */
  candidate(tenant: string): Promise<{ generation: CompiledGeneration | null; issues: CompileIssue[] }>;
  /** The dry-run of the drafts `apply` would write: applied, compiled and undone. */
  tryApply(tenant: string, apply: () => Promise<void>): Promise<DryRunResult>;
  go(tenant: string, onCommit?: (generation: number) => Promise<void>, apply?: () => Promise<void>): Promise<PublishResult>;
  rollback(tenant: string, to: number, onCommit?: (generation: number) => Promise<void>): Promise<PublishResult>;
}

export interface HealthView {
  targets(clusterKey: string): ProbedTarget[];
  states(): { cluster: string; target: string; state: TargetHealth }[];
}

export interface OutlierView {
  /** Until when `target` of `cluster` is ejected (null: it is not). */
  ejectedUntil(cluster: string, target: string): number | null;
  watched(): [string, string][];
  ejectionCounts(): [string, string, number][];
}

export interface FleetView {
  readonly nodeId: string;
  nodes(): Promise<FleetNode[]>;
}
