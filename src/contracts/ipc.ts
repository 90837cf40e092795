/**
 * Messages between the supervisor and its workers (node:cluster IPC, structured as
 * plain JSON). Errors cross as data: {code, message}, never as thrown objects.
 */
import type { ErrorCode } from '../shared/errors.js';
import type { UpstreamRules } from '../shared/upstream-policy.js';
import type { CompiledGeneration } from './generation.js';
import type { MetricsDelta } from './metrics.js';
import type { AccessLogField } from '../shared/gateway-config-observability.js';
import type { KeySetEntry } from './key-sets.js';
import type { DiscoverySet } from './discovery.js';

/** worker.json settings the data port applies to every request (not per generation). */
export interface DataPlaneSettings {
  paths: { escapedSlashes: 'reject' | 'keep' | 'decode'; mergeSlashes: boolean };
  /** CIDRs (or single addresses) of peers whose X-Forwarded-For is believed. */
  trustedProxies: string[];
  /** The upstream policy: workers check the addresses host names resolve to against it. */
  upstreams: UpstreamRules;
  /** worker.json's limits on slow and large clients. */
  limits: DataPortLimits;
  /** worker.json `listen.tls`, host filled in. */
  tls?: { host: string; port: number; clientCertificates?: ClientCertificateSettings };
  /** The engine serving both listeners, resolved by the supervisor (`listen.engine` auto: uws where it loads). */
  engine: 'uws' | 'node';
  /** ALPN protocols of the TLS listener, preferred first (default by engine: node h2 and http/1.1, uws http/1.1). */
  tlsProtocols: ('h2' | 'http/1.1')[];
  /** worker.json `listen.h2c`: cleartext HTTP/2 with prior knowledge on the plain port. */
  h2c: boolean;
  /** worker.json `secrets.keyEnv`: the variable of the key that opens sealed cert keys. */
  sealingKeyEnv?: string;
  /** What the data plane observes of its requests. */
  observe: ObserveSettings;
  /** worker.json `readiness.dataPath`: answered before routing with the node's readiness (`readiness` messages). */
  readyPath?: string;
  /** worker.json `steps`, each package resolved to its folder: every worker loads them at init. Absent: none. */
  steps?: StepPackagesSettings;
}

/** worker.json `listen.tls.clientCertificates`, its CA file read: the CAs as PEM text. */
export interface ClientCertificateSettings {
  ca: string;
  mode: 'optional' | 'required';
}

/** worker.json `steps` as a process loads it (docs/step-packages.md). */
export interface StepPackagesSettings {
  /** Absolute folders of the packages, in worker.json's order. */
  dirs: string[];
  /** Step code -> tenants (or `*`) that may use it. */
  tenants: Record<string, string[]>;
}

/** worker.json `metrics`, `requestId`, `log.access` and `tracing`, defaults filled. */
export interface ObserveSettings {
  metrics: boolean;
  /** null: requests get no id of ours (an incoming one is passed on as any header). */
  requestId: { header: string; trustIncoming: 'never' | 'trusted-proxies' | 'always' } | null;
  /** null: no global access log. `path`: absolute; absent: stdout. */
  accessLog: { format: 'json' | 'combined'; sample: number; fields: AccessLogField[] | null; path?: string; redactQuery: string[] } | null;
  /** null: no spans (traceparent is still propagated). */
  tracing: { endpoint: string; sampleRatio: number; headersEnv: Record<string, string>; serviceName: string } | null;
}

/** worker.json `limits`, every field filled (gateway-config-limits.ts has the defaults). */
export interface DataPortLimits {
  headerTimeoutMs: number;
  idleTimeoutS: number;
  bodyTimeoutMs: number;
  sendTimeoutMs: number;
  maxHeadBytes: number;
  maxTargetBytes: number;
  maxBodyBytes: number;
  maxConnections: number;
  chunkedRequestBodies: 'accept' | 'refuse';
  /** HTTP/2 (node engine): streams open at once on one connection. */
  h2MaxConcurrentStreams: number;
  /** HTTP/2: the header list a client may send, in bytes. */
  h2MaxHeaderListBytes: number;
  /** HTTP/2: stream resets per second a connection may cause before GOAWAY. */
  h2MaxResetsPerSecond: number;
  /** HTTP/2: seconds new connections from an address are refused after its connection got GOAWAY for resets; 0: never. */
  h2ResetCooldownS: number;
  /** A worker whose event loop is blocked this long is replaced (its watchdog reports it). */
  eventLoopStallMs: number;
  /** A worker whose heap passes this many MiB is replaced after a drain; 0: no bound. */
  workerHeapMb: number;
}

/** Per cluster key (`tenant/name`), the target addresses out of rotation: unhealthy by the checks, or ejected. */
export type HealthTable = Record<string, string[]>;

/** A generation a worker still serves, with its requests not yet ended (cluster routes only). */
export interface ServedGeneration {
  generation: number;
  inFlight: number;
}

/** What a worker tells of itself for `switchyard status`: open data-port connections, the current generation first, then each replaced one still draining. */
export interface WorkerLoad {
  connections: number;
  generations: ServedGeneration[];
  /** The V8 heap in use (live and not yet collected), in MiB. */
  heapMb?: number;
}

/**
 * What a worker's event-loop watchdog thread writes, one JSON line each, on the worker's
 * report pipe (fd 4; the main thread is blocked, so it cannot use IPC). The step named is
 * the one whose synchronous part was running when the loop stopped; `lastStep` the last
 * one started, as a hint when none was running (a block outside steps or after an await).
 */
export interface StallReport {
  type: 'stall';
  blockedMs: number;
  /** The running step's place, or null: no step's synchronous part was running. */
  tenant: string | null;
  route: string | null;
  step: string | null;
  lastStep: { tenant: string; route: string; step: string } | null;
}

/**
 * The watchdog's early word on the same pipe: `stall-suspect` once the loop has been blocked
 * for the suspect threshold (stall-watchdog-thread.ts), so the supervisor can boot a standby
 * replacement; `stall-cleared` when that loop beat again before the stall bound.
 */
export interface StallHintReport {
  type: 'stall-suspect' | 'stall-cleared';
  blockedMs: number;
}

/** Every line a watchdog writes on the report pipe. */
export type WatchdogReport = StallReport | StallHintReport;

/** A compiled generation as workers receive it: the compiler's output, as JSON. */
export interface GenerationMessage {
  id: number;
  payload: CompiledGeneration;
}

export type ToWorker =
  | {
      type: 'init';
      slot: number;
      listen: { host: string; port: number };
      generation: GenerationMessage | null;
      logLevel: string;
      /** drain.graceMs: what a worker sent SIGTERM directly (a process-group signal) drains with. */
      graceMs: number;
      dataPlane: DataPlaneSettings;
      /** The key sets the supervisor holds now (contracts/key-sets.ts): a worker that starts or respawns verifies at once. */
      keySets?: KeySetEntry[];
      /** The addresses the supervisor resolved for `{dns}` targets (contracts/discovery.ts): a worker that starts serves them at once. */
      discovery?: DiscoverySet[];
    }
  | { type: 'generation'; generation: GenerationMessage }
  /**
   * Key sets that changed (fetched, refreshed, stale, expired), pushed without a publish; `dropped`:
   * sources no served generation names any more. Also the answer to a `key-refresh` (then to the asker only).
   */
  | { type: 'key-sets'; sets: KeySetEntry[]; dropped?: string[] }
  /** `{dns}` targets' addresses that changed, pushed without a publish (a worker drops a source's set when it swaps to a generation without it). */
  | { type: 'discovery'; sets: DiscoverySet[] }
  /** Per cluster (`tenant/name`), the targets out of rotation: unhealthy by the checks, or ejected as outliers. */
  | { type: 'health'; unhealthy: HealthTable }
  | { type: 'drain'; graceMs: number }
  /** The node's readiness changed (sent only with a `readyPath`); a worker starts not ready. */
  | { type: 'readiness'; ready: boolean }
  /** The supervisor got SIGHUP (logrotate): reopen the access log file at its path. */
  | { type: 'reopen-logs' }
  /** Asks for the requests in flight at each target of `cluster` (`tenant/name`) in this worker. */
  | { type: 'in-flight'; id: number; cluster: string }
  /** Asks for the worker's WorkerLoad (cluster status). */
  | { type: 'status'; id: number }
  /**
   * Answer to a lease: `granted` tokens (0: denied until `retryAfterMs` from now). A cluster
   * bucket whose store is down: `unavailable` (denied, onStoreDown deny) or `unbacked` (tokens
   * not taken from the store, onStoreDown allow: never given back to it).
   */
  | { type: 'lease'; id: number; granted: number; retryAfterMs: number; remaining: number; unavailable?: true; unbacked?: true };

export type FromWorker =
  /** The worker's message handler is in place (ESM loads async, so 'online' is too early). */
  | { type: 'booted' }
  | { type: 'listening' }
  | { type: 'listen-failed'; error: { code: ErrorCode | 'Bind'; message: string } }
  | { type: 'ack'; generation: number }
  /**
   * Asks for tokens of a rate-limit bucket: node-wide, or with `cluster` fleet-wide (Redis).
   * `returned`: tokens of this worker's lapsed lease it did not spend, back to the bucket.
   */
  | { type: 'lease'; id: number; bucket: string; rps: number; burst: number; returned: number; cluster?: { onStoreDown: 'allow' | 'deny' } }
  | { type: 'nack'; generation: number; error: { code: ErrorCode; message: string } }
  /** A target of `cluster` failed `consecutiveFailures` requests in a row in this worker. */
  | { type: 'outlier'; cluster: string; target: string }
  /** Answer to an in-flight question: per target address, requests in flight or waiting for a connection. */
  | { type: 'in-flight'; id: number; counts: Record<string, number> }
  /** The data plane's counters that moved since the last shipment (once a second, and when draining). */
  | { type: 'metrics'; delta: MetricsDelta }
  /** Answer to a status question. */
  | ({ type: 'status'; id: number } & WorkerLoad)
  /** The worker's heap passed worker.json `limits.workerHeapMb` (told once): the supervisor replaces it. */
  | { type: 'heap'; usedMb: number; limitMb: number }
  /** An exception no request owned escaped (a step's timer callback threw): the supervisor replaces the worker after a drain. */
  | { type: 'faulted' }
  /**
   * A request met a token whose `kid` the worker's key set of `source` lacks, or the source has
   * no keys yet: the supervisor fetches (at most once per its minRefreshSeconds) and answers
   * with `key-sets`.
   */
  | { type: 'key-refresh'; source: string };
