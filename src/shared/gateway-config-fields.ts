import * as v from 'valibot';
import { parseCidr } from './cidr.js';
import { parseHostPort } from './host-port.js';
import { TENANT_PATTERN } from './tenant-name.js';

/** The field schemas worker.json's schema (gateway-config-schema.ts) is built from. */

export const SCOPE_PATTERN = /^(\*|[a-z][a-z-]*:(read|write|\*))$/;

export const Port = v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(65535));

export const HostPort = v.pipe(
  v.string(),
  v.check((s) => parseHostPort(s) !== null, 'must be ip:port, e.g. 127.0.0.1:9180 or [::1]:9180'),
);

export const TenantName = v.pipe(v.string(), v.regex(TENANT_PATTERN, 'must be a tenant name (a-z 0-9 -)'));

export const AdminKey = v.pipe(
  v.strictObject({
    id: v.pipe(v.string(), v.regex(/^[A-Za-z0-9._-]{1,64}$/, 'must be 1-64 of A-Z a-z 0-9 . _ -')),
    token: v.optional(v.pipe(v.string(), v.minLength(1))),
    tokenSha256: v.optional(v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex digits'))),
    tokenEnv: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name'))),
    scopes: v.pipe(v.array(v.pipe(v.string(), v.regex(SCOPE_PATTERN, 'must be {family}:{read|write|*} or *'))), v.minLength(1)),
    tenant: v.optional(TenantName),
  }),
  v.check(
    (k) => [k.token, k.tokenSha256, k.tokenEnv].filter((x) => x !== undefined).length === 1,
    'exactly one of token, tokenSha256, tokenEnv',
  ),
);

export const QUOTA_DEFAULTS = { entities: 1_000, documentBytes: 256 * 1024, totalBytes: 16 * 1024 * 1024, publishesPerMinute: 30, dryRunsPerMinute: 60 } as const;

const Count = (max: number) => v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(max));

export const QuotaLimitFields = {
  entities: Count(1_000_000),
  documentBytes: Count(1024 * 1024),
  totalBytes: Count(2 ** 40),
  publishesPerMinute: Count(1_000_000),
  dryRunsPerMinute: Count(1_000_000),
};

/** `a.b.c.d`, `a.b.c.d/n`, an IPv6 address or `v6/n`, with n in range for the family: what the workers' matcher takes. */
export function isCidr(s: string): boolean {
  return parseCidr(s) !== null;
}

export const Cidr = v.pipe(v.string(), v.check(isCidr, 'must be an IP address or CIDR, e.g. 10.0.0.0/8'));

export function CidrList() {
  return v.optional(v.array(Cidr), []);
}
