import * as v from 'valibot';
import { FAMILIES } from '../contracts/scopes.js';
import { TENANT_PATTERN } from './tenant-name.js';
import { ANY_SECRET, WILDCARD_TENANT } from '../contracts/secrets.js';
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, resolve } from 'node:path';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { parseCidr } from './cidr.js';
import type { UpstreamRules } from './upstream-policy.js';

/**
 * worker.json: one strict schema shared by `validate` and `run`, so the two can never
 * disagree. Unknown fields anywhere are errors (a typo must not silently fall back
 * to a default).
 */

export const SCOPE_PATTERN = /^(\*|[a-z][a-z-]*:(read|write|\*))$/;

const Port = v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(65535));

const HostPort = v.pipe(
  v.string(),
  v.check((s) => parseHostPort(s) !== null, 'must be ip:port, e.g. 127.0.0.1:9180 or [::1]:9180'),
);

const AdminKey = v.pipe(
  v.strictObject({
    id: v.pipe(v.string(), v.regex(/^[A-Za-z0-9._-]{1,64}$/, 'must be 1-64 of A-Z a-z 0-9 . _ -')),
    token: v.optional(v.pipe(v.string(), v.minLength(1))),
    tokenSha256: v.optional(v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex digits'))),
    tokenEnv: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name'))),
    scopes: v.pipe(v.array(v.pipe(v.string(), v.regex(SCOPE_PATTERN, 'must be {family}:{read|write|*} or *'))), v.minLength(1)),
    tenant: v.optional(v.pipe(v.string(), v.regex(TENANT_PATTERN, 'must be a tenant name (a-z 0-9 -)'))),
  }),
  v.check(
    (k) => [k.token, k.tokenSha256, k.tokenEnv].filter((x) => x !== undefined).length === 1,
    'exactly one of token, tokenSha256, tokenEnv',
  ),
);

export const QUOTA_DEFAULTS = { entities: 1_000, documentBytes: 256 * 1024, totalBytes: 16 * 1024 * 1024, publishesPerMinute: 30 } as const;

const Count = (max: number) => v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(max));

const QuotaLimitFields = {
  entities: Count(1_000_000),
  documentBytes: Count(1024 * 1024),
  totalBytes: Count(2 ** 40),
  publishesPerMinute: Count(1_000_000),
};

export const WorkerConfigSchema = v.strictObject({
  volume: v.pipe(
    v.string(),
    v.check((s) => s === 'memory:' || /^virtual:\/\/.+/.test(s), 'must be memory: or virtual://<path>'),
  ),
  listen: v.strictObject({
    port: Port,
    host: v.optional(v.pipe(v.string(), v.check((s) => isIP(s) !== 0, 'must be an IP address')), '0.0.0.0'),
  }),
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
  }),
  workers: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(64))),
  log: v.optional(
    v.strictObject({
      level: v.optional(v.picklist(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']), 'info'),
    }),
    {},
  ),
  drain: v.optional(
    v.strictObject({
      graceMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(600_000)), 10_000),
    }),
    {},
  ),
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
   * Environment variables each tenant's steps may name as a secret (jwt-auth secretEnv):
   * tenant -> names; `*` in the default tenant's list: any but the admin keys' tokenEnv. Default: none.
   */
  secrets: v.optional(
    v.strictObject({
      env: v.optional(v.record(v.pipe(v.string(), v.regex(TENANT_PATTERN, 'must be a tenant name (a-z 0-9 -)')), v.array(v.pipe(v.string(), v.regex(/^([A-Za-z_][A-Za-z0-9_]*|\*)$/, 'must be an environment variable name or *')))), {}),
    }),
    {},
  ),
  /** What one tenant may store and how often it may publish (see docs/reference.md "Quotas and history"). */
  quotas: v.optional(
    v.strictObject({
      entities: v.optional(QuotaLimitFields.entities, QUOTA_DEFAULTS.entities),
      documentBytes: v.optional(QuotaLimitFields.documentBytes, QUOTA_DEFAULTS.documentBytes),
      totalBytes: v.optional(QuotaLimitFields.totalBytes, QUOTA_DEFAULTS.totalBytes),
      publishesPerMinute: v.optional(QuotaLimitFields.publishesPerMinute, QUOTA_DEFAULTS.publishesPerMinute),
      /** Per-tenant overrides; a field left out takes the instance-wide value. */
      tenants: v.optional(
        v.record(
          v.pipe(v.string(), v.regex(TENANT_PATTERN, 'must be a tenant name (a-z 0-9 -)')),
          v.strictObject({
            entities: v.optional(QuotaLimitFields.entities),
            documentBytes: v.optional(QuotaLimitFields.documentBytes),
            totalBytes: v.optional(QuotaLimitFields.totalBytes),
            publishesPerMinute: v.optional(QuotaLimitFields.publishesPerMinute),
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
  trustedProxies: v.optional(v.array(v.pipe(v.string(), v.check(isCidr, 'must be an IP address or CIDR, e.g. 10.0.0.0/8'))), []),
  /** Upstream addresses tenants may reach, besides the defaults (docs/reference.md "Upstream allow-list"). */
  upstreams: v.optional(
    v.strictObject({
      allow: CidrList(),
      deny: CidrList(),
      tenants: v.optional(
        v.record(v.pipe(v.string(), v.regex(TENANT_PATTERN, 'must be a tenant name (a-z 0-9 -)')), v.strictObject({ allow: CidrList(), deny: CidrList() })),
        {},
      ),
    }),
    {},
  ),
});

function CidrList() {
  return v.optional(v.array(v.pipe(v.string(), v.check(isCidr, 'must be an IP address or CIDR, e.g. 10.0.0.0/8'))), []);
}

/** The upstream policy's input: worker.json's `upstreams` and the gateway's own ports. */
export function upstreamRules(config: WorkerConfig): UpstreamRules {
  const admin = parseHostPort(config.admin.listen)!;
  const local = Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((a) => a.address.split('%')[0]!));
  return { ...config.upstreams, admin, data: { host: config.listen.host, port: config.listen.port }, local };
}

/** `a.b.c.d`, `a.b.c.d/n`, an IPv6 address or `v6/n`, with n in range for the family: what the workers' matcher takes. */
export function isCidr(s: string): boolean {
  return parseCidr(s) !== null;
}

export type WorkerConfig = v.InferOutput<typeof WorkerConfigSchema>;
export type AdminKeyConfig = WorkerConfig['admin']['keys'][number];

export interface ConfigError {
  path: string;
  message: string;
}

export interface LoadedConfig {
  ok: boolean;
  config?: WorkerConfig;
  /** Folder of the config file: virtual:// paths are relative to it. */
  baseDir: string;
  errors: ConfigError[];
  warnings: string[];
}

export function parseHostPort(s: string): { host: string; port: number } | null {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([0-9.]+)):(\d{1,5})$/.exec(s);
  if (!m) return null;
  const host = (m[1] ?? m[2]) as string;
  const port = Number(m[3]);
  if (isIP(host) === 0 || port < 1 || port > 65535) return null;
  return { host, port };
}

/** Reads, parses and checks a worker.json; never throws. */
export function loadWorkerConfig(file: string, env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  const baseDir = dirname(resolve(file));
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    const message = (err as NodeJS.ErrnoException).code ? `cannot read file: ${(err as Error).message}` : `not valid JSON: ${(err as Error).message}`;
    return { ok: false, baseDir, errors: [{ path: '', message }], warnings: [] };
  }
  const parsed = v.safeParse(WorkerConfigSchema, raw);
  if (!parsed.success) {
    const errors = parsed.issues.map((i) => ({
      path: issuePath(i),
      message: i.expected === 'never' ? 'unknown field' : i.message,
    }));
    return { ok: false, baseDir, errors, warnings: [] };
  }
  const config = parsed.output;
  const errors: ConfigError[] = [];
  const warnings: string[] = [];
  const ids = new Set<string>();
  const byToken = new Map<string, string>(); // token fingerprint -> the first key's id
  config.admin.keys.forEach((k, i) => {
    if (ids.has(k.id)) errors.push({ path: `admin.keys.${i}.id`, message: `duplicate key id ${k.id}` });
    // `sys` matches the tenant pattern but is the instance-level path segment: such a key could call nothing.
    if (k.tenant === 'sys') errors.push({ path: `admin.keys.${i}.tenant`, message: 'sys is the instance-level path segment, not a tenant' });
    // Two keys with one token: the first would silently win, with its scopes.
    const plain = k.token ?? (k.tokenEnv !== undefined ? env[k.tokenEnv] : undefined);
    const fp = plain ? createHash('sha256').update(plain).digest('hex') : k.tokenSha256;
    if (fp !== undefined) {
      const first = byToken.get(fp);
      if (first !== undefined) errors.push({ path: `admin.keys.${i}`, message: `same token as admin key ${first}` });
      else byToken.set(fp, k.id);
    }
    // As `key issue` does: a scope of an unknown family would grant nothing, silently.
    k.scopes.forEach((scope, j) => {
      const family = scope.split(':')[0]!;
      if (scope !== '*' && !(FAMILIES as readonly string[]).includes(family)) {
        errors.push({ path: `admin.keys.${i}.scopes.${j}`, message: `unknown scope family ${family}: one of ${FAMILIES.join(', ')}` });
      }
    });
    ids.add(k.id);
    if (k.tokenEnv !== undefined) {
      const value = env[k.tokenEnv];
      if (!value) errors.push({ path: `admin.keys.${i}.tokenEnv`, message: `environment variable ${k.tokenEnv} is not set` });
      else if (value.length < 32) warnings.push(`admin key ${k.id}: the token in ${k.tokenEnv} is shorter than 32 characters`);
    }
    if (k.token !== undefined) {
      warnings.push(`admin key ${k.id}: plaintext token in the file; prefer tokenSha256 or tokenEnv`);
      if (k.token.length < 32) warnings.push(`admin key ${k.id}: token is shorter than 32 characters`);
    }
  });
  if (config.admin.keys.length === 0) warnings.push('no admin keys: every admin call but /healthz will be refused');
  const admin = parseHostPort(config.admin.listen);
  if (admin && (admin.host === '0.0.0.0' || admin.host === '::')) {
    warnings.push('the admin port listens on every interface; bind it to a private address');
  } else if (admin && !isLoopback(admin.host)) {
    warnings.push(`the admin port listens on ${admin.host}, which is not a loopback address; make sure only operators can reach it`);
  }
  // A block of prefix 0 trusts every peer: any client could then name its own address.
  for (const block of config.trustedProxies) {
    if (/\/0+$/.test(block)) warnings.push(`trustedProxies: ${block} trusts every peer, so any client can name its own address; list the proxies' own addresses`);
  }
  // `*` reaches every variable of the gateway: only the operator's own tenant may have it.
  const tokenEnvs = new Set(config.admin.keys.flatMap((k) => (k.tokenEnv === undefined ? [] : [k.tokenEnv])));
  for (const [tenant, names] of Object.entries(config.secrets.env)) {
    names.forEach((name, j) => {
      if (name === ANY_SECRET && tenant !== WILDCARD_TENANT) errors.push({ path: `secrets.env.${tenant}.${j}`, message: `* is for the ${WILDCARD_TENANT} tenant only; list the variables ${tenant} may name` });
      if (tokenEnvs.has(name)) warnings.push(`secrets.env.${tenant}: ${name} is an admin key's tokenEnv; no tenant may name it, listed or not`);
    });
  }
  // The data port and the admin port on one port of overlapping addresses: `run` could
  // bind only one of them (exit 11); it is the file that is wrong.
  if (admin && admin.port === config.listen.port && addressesOverlap(admin.host, config.listen.host)) {
    errors.push({ path: 'admin.listen', message: `the admin port ${config.admin.listen} is the data port (${config.listen.host}:${config.listen.port})` });
  }
  if (errors.length) return { ok: false, baseDir, errors, warnings };
  return { ok: true, config, baseDir, errors, warnings };
}

const WILDCARDS = new Set(['0.0.0.0', '::']);

function addressesOverlap(a: string, b: string): boolean {
  return a === b || WILDCARDS.has(a) || WILDCARDS.has(b);
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\./.test(host) || /^::ffff:127\./i.test(host);
}

function issuePath(issue: v.BaseIssue<unknown>): string {
  return (issue.path ?? []).map((p) => String((p as { key: unknown }).key)).join('.');
}
