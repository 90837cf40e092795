import * as v from 'valibot';
import { isSealed } from '../shared/secret-box.js';
import { splitHostPort } from '../shared/host-port.js';
import { MANAGED_HEADERS } from '../shared/hop-by-hop.js';
import { pointer } from '../shared/json-pointer.js';
import { DnsTarget } from './dns-target-doc.js';
import type { Kind } from '../contracts/entities.js';
import { WEBSOCKET_MAX_MESSAGE_BYTES } from '../contracts/generation.js';

/**
 * Entity documents: the structure each kind must have to be stored as a draft
 * (`config set`, 400 Svc.Config.Invalid otherwise). Structure only: references,
 * terminals and step settings are checked by the compiler, so a draft may be
 * incomplete while it is being written.
 */

/** A header value the data plane writes as is: no CR, LF or NUL (no response splitting). */
const HeaderValue = v.pipe(v.string(), v.regex(/^[^\r\n\0]*$/, 'must not contain CR, LF or NUL'));

export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** `host:port`, or with a scheme, `http://host:port` or `https://host:port` (TLS: compiler/cluster-tls.ts). */
const Address = v.pipe(
  v.string(),
  v.regex(/^(?:https?:\/\/)?(?:\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, 'must be host:port, http://host:port or https://host:port'),
  v.check((s) => {
    const port = splitHostPort(s.replace(/^https?:\/\//, ''))?.port ?? 0;
    return port >= 1;
  }, 'port must be 1-65535'),
);

const Weight = v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1_000));

/** `host:port`, `{address, weight}` (a target with weight 3 gets three times the requests of one with 1), or a DNS name's addresses. */
const WeightedAddress = v.strictObject({ address: Address, weight: v.optional(Weight, 1) });
// Chosen by the form written, so an error names the field of that form rather than "no form matched".
const Target = v.lazy((t: unknown) => (typeof t === 'string' ? Address : typeof t === 'object' && t !== null && 'dns' in t ? DnsTarget : WeightedAddress));
export { isDnsTarget, type DnsTargetDoc } from './dns-target-doc.js';

/** What a `hash` cluster keys its targets on: exactly one request part. */
const HashOn = v.union([
  v.strictObject({ header: v.pipe(v.string(), v.regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, 'must be a header name')) }),
  v.strictObject({ cookie: v.pipe(v.string(), v.minLength(1), v.maxLength(256)) }),
  v.strictObject({ query: v.pipe(v.string(), v.minLength(1), v.maxLength(256)) }),
  v.strictObject({ clientIp: v.literal(true) }),
  v.strictObject({ path: v.literal(true) }),
]);

/** Request bodies up to maxBytes are read whole before an upstream connection is taken; 0 streams. */
const RequestBuffering = v.strictObject({
  maxBytes: v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(64 * 1024 * 1024)),
});

const Ms = (min: number, max: number) => v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max));

/** Active health checks, run once per node by the supervisor (docs/reference.md "Health checks"). */
const HealthCheck = v.strictObject({
  path: v.pipe(v.string(), v.regex(/^\/[\x21-\x7e]*$/, 'must be a path starting with / (printable ASCII, no spaces)'), v.maxLength(2048)),
  intervalMs: v.optional(Ms(100, 600_000), 5_000),
  timeoutMs: v.optional(Ms(10, 600_000), 1_000),
  healthyThreshold: v.optional(Ms(1, 100), 2),
  unhealthyThreshold: v.optional(Ms(1, 100), 2),
  /** The statuses that count as healthy; default any 2xx or 3xx. */
  expectStatus: v.optional(v.pipe(v.array(Ms(100, 599)), v.minLength(1))),
  /** The Host header of a probe; default the target's host:port. */
  host: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9a-fA-F:.]+\](:\d{1,5})?$/, 'must be host[:port]'))),
  /** What a target not yet probed counts as. */
  initial: v.optional(v.picklist(['healthy', 'unhealthy']), 'healthy'),
});

/** Passive health: a target failing requests is taken out for a while (docs/reference.md "Outlier ejection"). */
const Outlier = v.strictObject({
  consecutiveFailures: v.optional(Ms(1, 1_000), 5),
  ejectMs: v.optional(Ms(100, 3_600_000), 30_000),
  maxEjectedPercent: v.optional(Ms(0, 100), 50),
  /** Whether 5xx answers count as failures (connect failures and resets always do). */
  on5xx: v.optional(v.boolean(), true),
});

/** Retries as cluster policy, within a budget (docs/reference.md "Cluster retries"). */
const ClusterRetry = v.strictObject({
  attempts: v.optional(Ms(2, 10), 2),
  on: v.optional(v.pipe(v.array(v.picklist(['connect-failure', 'reset', '502', '503', '504'])), v.minLength(1)), ['connect-failure', 'reset', '503']),
  budgetPercent: v.optional(Ms(0, 100), 20),
  minRetriesPerSecond: v.optional(Ms(0, 1_000), 1),
  /** Each attempt's wait for the answer head, the first attempt included (below the cluster's headersMs). */
  perTryTimeoutMs: v.optional(Ms(1, 3_600_000)),
});

const EnvName = v.pipe(v.string(), v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name'));

/**
 * TLS to the cluster's https:// targets (docs/reference.md "TLS to upstreams"). The client
 * certificate is named by environment variables, never written here: a document, a
 * generation and the audit trail hold no private key.
 */
const ClusterTls = v.strictObject({
  /** SNI and the name the certificate must carry; default the target's host (an IP: its IP SANs, no SNI). */
  serverName: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9.-]{1,253}$/, 'must be a host name'))),
  /** PEM CA certificates to trust instead of Node's bundled (Mozilla) list, for this cluster only; or the name of a `cert` of the tenant whose chain to trust. */
  ca: v.optional(v.pipe(v.string(), v.maxLength(256 * 1024))),
  verify: v.optional(v.boolean(), true),
  /** mTLS: the name of a `cert` of the tenant, or environment variables holding the PEMs. */
  clientCertificate: v.optional(v.union([v.pipe(v.string(), v.regex(NAME_PATTERN, 'must be the name of a cert')), v.strictObject({ certificateEnv: EnvName, privateKeyEnv: EnvName })])),
});

export const ClusterDoc = v.strictObject({
  targets: v.pipe(v.array(Target), v.minLength(1, 'needs at least one target')),
  /** What the targets are spoken to in: HTTP/1.1, HTTP/2 over TLS (h2), HTTP/2 with prior knowledge (h2c) (docs/reference.md "Clusters"). */
  protocol: v.optional(v.picklist(['http1.1', 'h2', 'h2c']), 'http1.1'),
  /** How a request picks a target (docs/reference.md "Clusters"). */
  balance: v.optional(v.picklist(['round-robin', 'least-request', 'hash']), 'round-robin'),
  hashOn: v.optional(HashOn),
  healthCheck: v.optional(HealthCheck),
  outlier: v.optional(Outlier),
  retry: v.optional(ClusterRetry),
  /** Upstream timeouts in milliseconds: connect, and headers (time to the first response byte). */
  timeouts: v.optional(
    v.strictObject({
      connectMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(600_000))),
      headersMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(3_600_000))),
      bodyMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(3_600_000))),
      /** h2 and h2c: a PING every pingMs while a connection carries streams; no answer within connectMs closes it. */
      pingMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(100), v.maxValue(3_600_000))),
    }),
  ),
  /** The upstream connection budget of each worker (docs/reference.md "Upstream connections and request bodies"). */
  connections: v.optional(
    v.strictObject({
      perTarget: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(10_000))),
      maxPending: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(100_000))),
      pendingTimeoutMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(600_000))),
    }),
  ),
  requestBuffering: v.optional(RequestBuffering),
  tls: v.optional(ClusterTls),
});

/** A step's budget (ms): past it, a step still working on its request answers 504 Svc.Data.StepTimeout. */
export const STEP_TIMEOUT_MAX_MS = 30_000;
const StepTimeoutMs = v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(STEP_TIMEOUT_MAX_MS));

export const StepDoc = v.strictObject({
  code: v.pipe(v.string(), v.minLength(1)),
  settings: v.optional(v.record(v.string(), v.unknown()), {}),
  timeoutMs: v.optional(StepTimeoutMs),
});

const Status = v.pipe(v.number(), v.integer());

/** A route's `tls`: "required" answers a request on the plain port with 308 to https. */
export const RouteTls = v.picklist(['required']);

export const RouteDoc = v.strictObject({
  cluster: v.optional(v.pipe(v.string(), v.minLength(1))),
  pathPrefix: v.optional(v.pipe(v.string(), v.startsWith('/', 'must start with /'))),
  order: v.optional(v.pipe(v.number(), v.integer())),
  hosts: v.optional(v.array(v.pipe(v.string(), v.regex(/^(\*\.)?[A-Za-z0-9.-]+$/, 'must be a host name, optionally *.suffix')))),
  tls: v.optional(RouteTls),
  methods: v.optional(v.array(v.pipe(v.string(), v.regex(/^[A-Z]+$/, 'must be an upper-case method')))),
  /** false: pathPrefix is compared without regard to case (for case-insensitive upstreams). */
  caseSensitive: v.optional(v.boolean()),
  requestBuffering: v.optional(RequestBuffering),
  /** true or an object: WebSocket upgrades are proxied (docs/reference.md "WebSocket"); absent or false: refused. */
  websocket: v.optional(
    v.union([
      v.boolean(),
      v.strictObject({
        maxMessageBytes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(WEBSOCKET_MAX_MESSAGE_BYTES))),
        idleTimeoutMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1_000), v.maxValue(86_400_000))),
        maxConnections: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1_000_000))),
      }),
    ]),
  ),
  /**
   * The route carries gRPC calls (docs/reference.md "gRPC"): `true`, or `{web: true}` to
   * also take gRPC-Web from browsers and speak gRPC to the upstream.
   */
  grpc: v.optional(v.union([v.boolean(), v.strictObject({ web: v.optional(v.boolean(), false) })])),
  directResponse: v.optional(
    v.strictObject({
      statusCode: v.pipe(Status, v.minValue(200, 'must be a final status (200-599)'), v.maxValue(599)),
      body: v.optional(v.string(), ''),
      // Framing and hop-by-hop lines are the engine's: a configured one would go out beside its own.
      headers: v.optional(v.record(v.pipe(v.string(), v.regex(/^[A-Za-z0-9-]+$/), v.check((n) => !MANAGED_HEADERS.has(n.toLowerCase()), 'is managed by the gateway (framing or hop-by-hop): it cannot be set')), HeaderValue)),
    }),
  ),
  redirect: v.optional(
    v.strictObject({
      location: v.pipe(HeaderValue, v.minLength(1)),
      statusCode: v.optional(v.picklist([301, 302, 303, 307, 308])),
    }),
  ),
  steps: v.optional(v.array(StepDoc)),
});

const Canvas = v.strictObject({ x: v.number(), y: v.number() });

export const OrchDoc = v.strictObject({
  nodes: v.pipe(
    v.array(
      v.strictObject({
        id: v.pipe(v.string(), v.minLength(1)),
        step: v.pipe(v.string(), v.minLength(1)),
        settings: v.optional(v.record(v.string(), v.unknown()), {}),
        timeoutMs: v.optional(StepTimeoutMs),
        failureStrategy: v.optional(v.string()),
        canvas: v.optional(Canvas),
      }),
    ),
    v.minLength(1, 'needs at least one node'),
  ),
  links: v.array(v.strictObject({ from: v.string(), to: v.string() })),
  groups: v.optional(
    v.array(
      v.strictObject({
        id: v.pipe(v.string(), v.minLength(1)),
        nodes: v.pipe(v.array(v.string()), v.minLength(1)),
        merge: v.optional(v.string()),
        canvas: v.optional(Canvas),
      }),
    ),
  ),
});

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----/;
const PEM_KEY = /^\s*-----BEGIN (RSA |EC )?PRIVATE KEY-----[\s\S]+-----END (RSA |EC )?PRIVATE KEY-----\s*$/;

/**
 * A TLS certificate for the data port's TLS listener (docs/reference.md "TLS"). The private
 * key is write-only: stored sealed (secrets.keyEnv) and never shown again; `sy1.` marks a
 * sealed key as the store holds it.
 */
export const CertDoc = v.strictObject({
  certificate: v.pipe(v.string(), v.maxLength(65_536), v.regex(PEM_CERTIFICATE, 'must be a PEM certificate chain, the leaf first')),
  privateKey: v.pipe(
    v.string(),
    v.maxLength(16_384),
    v.check((s) => PEM_KEY.test(s) || isSealed(s), 'must be an unencrypted PEM private key (PKCS#8, RSA or EC)'),
  ),
  /** The names served with it; default: the certificate's DNS names; []: not served (a cert clusters name as `ca` or client certificate). */
  hosts: v.optional(v.array(v.pipe(v.string(), v.regex(/^(\*\.)?[A-Za-z0-9.-]+$/, 'must be a host name, optionally *.suffix')))),
  /** Answers a handshake whose name no certificate serves (the default tenant only). */
  default: v.optional(v.boolean()),
});

export type ClusterDoc = v.InferOutput<typeof ClusterDoc>;
export type CertDoc = v.InferOutput<typeof CertDoc>;
export type RouteDoc = v.InferOutput<typeof RouteDoc>;
export type OrchDoc = v.InferOutput<typeof OrchDoc>;
export type StepDoc = v.InferOutput<typeof StepDoc>;

const SCHEMAS = { cluster: ClusterDoc, route: RouteDoc, orch: OrchDoc, cert: CertDoc } as const;

export interface FieldError {
  path: string;
  message: string;
}

/** Checks a document's structure; returns the normalised document or field errors. */
export function parseDocument(kind: Kind, doc: unknown): { ok: true; doc: unknown } | { ok: false; errors: FieldError[] } {
  // valibot's object schemas take an array as an object with no fields: refuse it here.
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return { ok: false, errors: [{ path: '', message: `a ${kind} document must be a JSON object` }] };
  const r = v.safeParse(SCHEMAS[kind], doc);
  if (r.success) return { ok: true, doc: r.output };
  return {
    ok: false,
    errors: r.issues.map((i) => ({ path: pointer(i.path), message: i.expected === 'never' ? 'unknown field' : i.message })),
  };
}

export { pointer, pointerToken } from '../shared/json-pointer.js';
