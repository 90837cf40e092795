import * as v from 'valibot';
import { isPgVolume, parsePgVolume } from './pg-volume-url.js';
import { LimitsSchema } from './gateway-config-limits.js';
import { ListenSchema } from './gateway-config-listen.js';
import { ReadinessSchema } from './gateway-config-readiness.js';
import { DiscoverySchema } from './gateway-config-discovery.js';
import { OidcSchema } from './gateway-config-oidc.js';
import { AccessLogSchema, MetricsSchema, RequestIdSchema, TracingSchema } from './gateway-config-observability.js';
import { AdminKey, CidrList, HostPort, QUOTA_DEFAULTS, QuotaLimitFields, TenantName } from './gateway-config-fields.js';

/**
 * worker.json, the gateway's config file: one strict schema shared by `validate` and `run`,
 * so the two can never disagree. Unknown fields anywhere are errors (a typo must not
 * silently fall back to a default).
 */
/** Why a postgres:// volume cannot be used as written (a password in it, a bad schema name), or null. */
function pgVolumeProblem(spec: string): string | null {
  try {
    parsePgVolume(spec);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

export const GatewayConfigSchema = v.strictObject({
  volume: v.pipe(
    v.string(),
    v.check((s) => s === 'memory:' || /^virtual:\/\/.+/.test(s) || isPgVolume(s), 'must be memory:, virtual://<path> or postgres://…'),
    v.check((s) => !isPgVolume(s) || pgVolumeProblem(s) === null, (issue) => pgVolumeProblem(issue.input as string) ?? ''),
  ),
  listen: ListenSchema,
  admin: v.strictObject({
    listen: HostPort,
    keys: v.optional(v.array(AdminKey), []),
    /** Failed authentications per client address before it gets 429 (token guessing). */
    authFailures: v.optional(
      v.strictObject({
        burst: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1_000_000)), 20),
        perSecond: v.optional(v.pipe(v.number(), v.gtValue(0), v.maxValue(1_000_000)), 1),
      }),
      {},
    ),
    /** Open admin connections one client address may hold; more are answered 429 and closed. */
    maxConnectionsPerAddress: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100_000)), 64),
    /** Open admin connections in all; lowered at run time to what the descriptor limit leaves. */
    maxConnections: v.optional(v.pipe(v.number(), v.integer(), v.minValue(16), v.maxValue(1_000_000)), 1_024),
    /** Console sign-in through an OpenID provider (docs/configuration.md); absent: bearer tokens only. */
    oidc: OidcSchema,
  }),
  workers: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(64))),
  log: v.optional(
    v.strictObject({
      level: v.optional(v.picklist(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']), 'info'),
      access: AccessLogSchema,
    }),
    {},
  ),
  /** The data plane's Prometheus series (docs/observability.md). */
  metrics: MetricsSchema,
  /** Every request's id (docs/observability.md "Request id"). */
  requestId: RequestIdSchema,
  /** OpenTelemetry traces over OTLP/HTTP (docs/observability.md "Traces"). */
  tracing: TracingSchema,
  drain: v.optional(
    v.strictObject({
      graceMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(600_000)), 10_000),
    }),
    {},
  ),
  /** What one slow or large client may take of a worker (see docs/reference.md "Limits"). */
  limits: LimitsSchema,
  /** /readyz's store bound and an optional data-port readiness path (docs/reference.md "Liveness and readiness"). */
  readiness: ReadinessSchema,
  /** The DNS servers for clusters' `{dns}` targets (docs/reference.md "DNS targets"); absent: the system's. */
  discovery: DiscoverySchema,
  /** How the data port reads request paths (one policy for every route; see docs/reference.md "Paths"). */
  paths: v.optional(
    v.strictObject({
      /** `%2F`, `%5C` and a raw backslash: refused 400, kept encoded, or decoded to `/`. */
      escapedSlashes: v.optional(v.picklist(['reject', 'keep', 'decode']), 'reject'),
      /** `//` merged into `/` before routing and forwarding. */
      mergeSlashes: v.optional(v.boolean(), true),
    }),
    {},
  ),
  /**
   * Step packages (docs/step-packages.md): `packages` are npm package names or paths (absolute,
   * or relative to worker.json) loaded by the supervisor and every worker at start; `tenants`
   * maps an installed step's code to the tenants that may use it (`*`: every tenant); a code
   * not listed is for the `default` tenant only.
   */
  steps: v.optional(
    v.strictObject({
      packages: v.optional(v.array(v.pipe(v.string(), v.minLength(1), v.maxLength(1024))), []),
      tenants: v.optional(v.record(v.pipe(v.string(), v.regex(/^[a-z][a-z0-9-]{1,62}$/, 'must be a step code')), v.array(v.union([TenantName, v.literal('*')]))), {}),
    }),
    {},
  ),
  /**
   * Environment variables each tenant's steps may name as a secret (jwt-auth secretEnv):
   * tenant -> names; `*` in the default tenant's list: any but the admin keys' tokenEnv. Default: none.
   */
  secrets: v.optional(
    v.strictObject({
      env: v.optional(v.record(TenantName, v.array(v.pipe(v.string(), v.regex(/^([A-Za-z_][A-Za-z0-9_]*|\*)$/, 'must be an environment variable name or *')))), {}),
      /** The environment variable holding the 256-bit key that seals stored private keys (AES-256-GCM). */
      keyEnv: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name'))),
    }),
    {},
  ),
  /**
   * The Redis that `rate-limit` steps with `scope: "cluster"` count in, shared by every node
   * (docs/fleet.md). No password in the file: `passwordEnv` names the variable holding it.
   */
  redis: v.optional(
    v.strictObject({
      url: v.pipe(
        v.string(),
        v.regex(/^rediss?:\/\/[A-Za-z0-9.-]+(:\d+)?(\/\d+)?$/, 'must be redis://host:port[/db] (no user, password or options: the password by passwordEnv)'),
      ),
      passwordEnv: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name'))),
      /** Prefix of every key the gateway writes (one Redis may serve several fleets). */
      keyPrefix: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9:_.-]{1,64}$/)), 'switchyard:'),
    }),
  ),
  /** What one tenant may store and how often it may publish (see docs/reference.md "Quotas and history"). */
  quotas: v.optional(
    v.strictObject({
      entities: v.optional(QuotaLimitFields.entities, QUOTA_DEFAULTS.entities),
      documentBytes: v.optional(QuotaLimitFields.documentBytes, QUOTA_DEFAULTS.documentBytes),
      totalBytes: v.optional(QuotaLimitFields.totalBytes, QUOTA_DEFAULTS.totalBytes),
      publishesPerMinute: v.optional(QuotaLimitFields.publishesPerMinute, QUOTA_DEFAULTS.publishesPerMinute),
      dryRunsPerMinute: v.optional(QuotaLimitFields.dryRunsPerMinute, QUOTA_DEFAULTS.dryRunsPerMinute),
      /** Per-tenant overrides; a field left out takes the instance-wide value. */
      tenants: v.optional(
        v.record(
          TenantName,
          v.strictObject({
            entities: v.optional(QuotaLimitFields.entities),
            documentBytes: v.optional(QuotaLimitFields.documentBytes),
            totalBytes: v.optional(QuotaLimitFields.totalBytes),
            publishesPerMinute: v.optional(QuotaLimitFields.publishesPerMinute),
            dryRunsPerMinute: v.optional(QuotaLimitFields.dryRunsPerMinute),
          }),
        ),
        {},
      ),
    }),
    {},
  ),
  /** How many of each tenant's generations keep the state a rollback restores. */
  history: v.optional(
    v.strictObject({
      keep: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(10_000)), 50),
    }),
    {},
  ),
  /** Peers whose X-Forwarded-For is believed (CIDR or a single address); empty: none. */
  trustedProxies: CidrList(),
  /** Upstream addresses tenants may reach, besides the defaults (docs/reference.md "Upstream allow-list"). */
  upstreams: v.optional(
    v.strictObject({
      allow: CidrList(),
      deny: CidrList(),
      tenants: v.optional(v.record(TenantName, v.strictObject({ allow: CidrList(), deny: CidrList() })), {}),
    }),
    {},
  ),
});

export type GatewayConfig = v.InferOutput<typeof GatewayConfigSchema>;
export type AdminKeyConfig = GatewayConfig['admin']['keys'][number];
