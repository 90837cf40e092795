import type { CompileIssueCode } from '../shared/errors.js';
import type { KeySourceSpec } from './key-sets.js';
import type { DiscoverySource, DiscoveryTarget } from './discovery.js';

/**
 * The compiled generation: what the compiler produces and workers receive. Plain
 * JSON (it crosses IPC and is stored with the generation), already checked: a worker
 * builds closures and lookup structures from it and validates nothing.
 */
export interface CompiledGeneration {
  format: 1;
  /** Routes per tenant, ranked (rank 0 is the most preferred). */
  tenants: Record<string, { routes: CompiledRoute[] }>;
  /** Host claims: exact host or `*.suffix` -> tenant. Unclaimed hosts belong to `default`. */
  hostOwners: Record<string, string>;
  /** Clusters by `tenant/name`. */
  clusters: Record<string, CompiledCluster>;
  /** What the TLS listener serves; absent in a generation without certificates. */
  serverTls?: CompiledServerTls;
  /**
   * The build of each package step the routes use (code -> build), as the supervisor loaded
   * it: a worker that loaded another build of one refuses the routes using it. Absent: none.
   */
  stepBuilds?: Record<string, StepBuild>;
  /**
   * The key sets the routes' steps verify against that the supervisor fetches (jwt-auth
   * `jwksUri`, `issuer` discovery), one per tenant and URL. Absent: none.
   */
  keySources?: KeySourceSpec[];
  /** The DNS names clusters' `{dns}` targets resolve, one per cluster, type, name and port (contracts/discovery.ts). Absent: none. */
  discoverySources?: DiscoverySource[];
}

/** Which build of a step package a step comes from (docs/step-packages.md "Build stamps"). */
export interface StepBuild {
  package: string;
  version: string;
  /** sha256 (hex) over the package's files (content-hash.ts). */
  hash: string;
}

/** A `cert` entity as the TLS listener loads it. */
export interface CompiledCert {
  /** PEM chain, the leaf first. */
  certificate: string;
  /** As stored: sealed (`sy1.`, opened with secrets.keyEnv and `tenant/cert/name`) or PEM. */
  privateKey: string;
  fingerprint256: string;
}

export interface CompiledServerTls {
  /** By `tenant/name`. */
  certs: Record<string, CompiledCert>;
  /** Exact host or `*.suffix` -> the cert that serves it (`tenant/name`). */
  hosts: Record<string, string>;
  /** The cert for a name no other serves (`tenant/name`); absent: such handshakes are refused. */
  default?: string;
}

/**
 * Per worker and target (docs/reference.md "Upstream connections and request bodies"). Here rather than in the compiler because a
 * worker also falls back on them for a stored generation compiled before they existed.
 * Like Envoy's cluster defaults (1024 pending requests); a request waits for a connection
 * about as long as for a connect (HAProxy's `timeout queue` defaults to `timeout connect`).
 */
/** How often an h2/h2c connection that carries streams is PINGed (cluster `timeouts.pingMs`), also for a generation stored before it existed. */
export const H2_PING_DEFAULT_MS = 10_000;

export const CONNECTION_DEFAULTS = { perTarget: 256, maxPending: 1024, pendingTimeoutMs: 5_000 } as const;
/** Request bodies up to this size are read whole before an upstream connection is taken. */
export const REQUEST_BUFFERING_DEFAULT_BYTES = 64 * 1024;

/** A route's `websocket` block (docs/reference.md "WebSocket"); absent: upgrades are refused. */
export interface WebSocketSettings {
  /** A whole message (all its fragments) larger than this closes the WebSocket with 1009. */
  maxMessageBytes: number;
  /** No message, ping or pong either way for this long closes the WebSocket with 1001. */
  idleTimeoutMs: number;
  /** Open WebSockets (handshakes in progress included) of the route, per worker. */
  maxConnections: number;
}

export const WEBSOCKET_DEFAULTS: WebSocketSettings = { maxMessageBytes: 1024 * 1024, idleTimeoutMs: 60_000, maxConnections: 1_000 };

/** The largest maxMessageBytes a route may set: uWS buffers a fragmented message up to this before the route's bound is checked. */
export const WEBSOCKET_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

export interface CompiledCluster {
  /**
   * Each target as written: `host:port`, `http://host:port` or `https://host:port` (shared/target-url.ts).
   * A cluster with `discover` lists its fixed targets here (maybe none); the workers and
   * the supervisor add the addresses resolved (shared/discovery-targets.ts).
   */
  targets: string[];
  /** Per target, when they are not all 1 (round-robin and least-request weigh by them). */
  weights?: number[];
  /** Targets found by DNS (`{dns}` targets); absent: none. */
  discover?: DiscoveryTarget[];
  /**
   * Per target, its SRV priority once expanded (fixed and A/AAAA targets: 0); absent: all 0.
   * Only the lowest value with a target in rotation serves.
   */
  priorities?: number[];
  /** Absent: round-robin (generations stored before balancing existed). */
  balance?: 'round-robin' | 'least-request' | 'hash';
  /** With balance "hash": the request part the target is chosen by. */
  hashOn?: HashOn;
  /** Active health checks (the supervisor probes; workers get the verdicts). */
  healthCheck?: CompiledHealthCheck;
  /** Passive health: workers report failing targets, the supervisor ejects them node-wide. */
  outlier?: { consecutiveFailures: number; ejectMs: number; maxEjectedPercent: number; on5xx: boolean };
  /** Retries of a replayable request, on another target, within a budget per worker. */
  retry?: {
    attempts: number;
    on: ('connect-failure' | 'reset' | '502' | '503' | '504')[];
    budgetPercent: number;
    minRetriesPerSecond: number;
    perTryTimeoutMs?: number;
  };
  connectMs: number;
  headersMs: number;
  bodyMs: number;
  /** Per worker: connections per target, requests that may wait for one, and how long. */
  connections: { perTarget: number; maxPending: number; pendingTimeoutMs: number };
  /** TLS to the https:// targets; absent: Node's defaults (verified against its bundled CAs). */
  tls?: CompiledTls;
  /** HTTP/2 to the targets: `h2` over TLS (ALPN h2), `h2c` with prior knowledge; absent: HTTP/1.1 (also every generation stored before it existed). */
  protocol?: 'h2' | 'h2c';
  /** h2/h2c: a PING every pingMs while a connection carries streams; unanswered within connectMs, the connection closes (absent: 10 s). */
  pingMs?: number;
}

/**
 * The client certificate travels as the names of the environment variables holding its
 * PEMs, read by each process when it connects: no private key is ever in a generation.
 */
export interface CompiledTls {
  serverName?: string;
  ca?: string;
  verify: boolean;
  /** From environment variables, or a `cert` entity (`id` tenant/name; its key as stored: sealed or PEM). */
  clientCertificate?: { certificateEnv: string; privateKeyEnv: string } | { cert: string; certificate: string; privateKey: string };
}

export interface CompiledHealthCheck {
  path: string;
  intervalMs: number;
  timeoutMs: number;
  healthyThreshold: number;
  unhealthyThreshold: number;
  /** Empty: any 2xx or 3xx. */
  expectStatus: number[];
  host?: string;
  initial: 'healthy' | 'unhealthy';
}

export type HashOn = { header: string } | { cookie: string } | { query: string } | { clientIp: true } | { path: true };

export interface CompiledRoute {
  id: string;
  tenant: string;
  name: string;
  order: number;
  /** '' matches every path. */
  pathPrefix: string;
  hosts: string[] | null;
  methods: string[] | null;
  /** false: pathPrefix matches without regard to case. */
  caseSensitive: boolean;
  /** 'required': a request on the plain port is answered 308 to https. */
  tls?: 'required';
  rank: number;
  terminal: CompiledTerminal;
}

export type CompiledTerminal =
  /** bufferBytes: request bodies up to this size are read whole before the upstream is called; 0 streams. */
  | { type: 'cluster'; cluster: string; steps: CompiledStep[]; bufferBytes: number; websocket?: WebSocketSettings; grpc?: { web: boolean } }
  | { type: 'redirect'; location: string; statusCode: number }
  | { type: 'directResponse'; statusCode: number; body: string; headers: Record<string, string> };

export type CompiledStep =
  /**
   * `continue`: the node's failureStrategy is Continue: a reply from it is logged and the chain goes on.
   * `timeoutMs`: the budget of the step's promise (the route's or node's `timeoutMs`, else the step's default); absent: none.
   */
  | { kind: 'step'; code: string; settings: unknown; tenant: string; bucket: string; continue?: true; timeoutMs?: number }
  | { kind: 'group'; id: string; merge: string; members: CompiledStep[][] };

export interface CompileIssue {
  kind: string;
  name: string;
  /** JSON pointer into the entity document. */
  pointer: string;
  code: CompileIssueCode;
  message: string;
}
