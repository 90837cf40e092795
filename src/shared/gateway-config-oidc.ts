import * as v from 'valibot';
import { SCOPE_PATTERN, TenantName } from './gateway-config-fields.js';
import { isLoopback } from './host-port.js';

/** The defaults and bounds of worker.json's `admin.oidc`. */
export const OIDC_DEFAULTS = { scopes: ['openid', 'email'], sessionSeconds: 8 * 3600, maxSessions: 1_000 } as const;

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** https, or http to a loopback address (a provider on the same host, a test's). */
function secureOrLoopback(s: string): boolean {
  if (!URL.canParse(s)) return false;
  const u = new URL(s);
  return u.protocol === 'https:' || (u.protocol === 'http:' && isLoopback(u.hostname.replace(/^\[|\]$/g, '')));
}

const HttpUrl = (what: string) =>
  v.pipe(
    v.string(),
    v.check(secureOrLoopback, `${what} must be an https:// URL (http:// only to a loopback address)`),
    v.check((s) => !URL.canParse(s) || (new URL(s).search === '' && new URL(s).hash === ''), `${what} must have no query or fragment`),
  );

/** Which signed-in users get which admin scopes: a claim holding (or containing) a value. */
const OidcMapping = v.strictObject({
  /** An ID token (or userinfo) claim: a string compared whole, or a list of strings that must contain `value`. */
  claim: v.pipe(v.string(), v.minLength(1), v.maxLength(128)),
  value: v.pipe(v.string(), v.minLength(1), v.maxLength(256)),
  scopes: v.pipe(v.array(v.pipe(v.string(), v.regex(SCOPE_PATTERN, 'must be {family}:{read|write|*} or *'))), v.minLength(1)),
  /** null: instance-wide, like a system key; a name: bound to that tenant, like a tenant key. */
  tenant: v.nullable(TenantName),
});

/**
 * worker.json `admin.oidc` (docs/configuration.md "Console sign-in (OIDC)"): operators sign
 * in to the console through an OpenID provider (authorization code with PKCE). Absent: the
 * console takes bearer tokens only.
 */
export const OidcSchema = v.optional(
  v.strictObject({
    issuer: HttpUrl('issuer'),
    clientId: v.pipe(v.string(), v.minLength(1), v.maxLength(256)),
    /** The environment variable holding the client secret: never in the file, no default. */
    clientSecretEnv: v.pipe(v.string(), v.regex(ENV_NAME, 'must be an environment variable name')),
    /** The admin port as browsers reach it (a TLS proxy's URL): the callback is <publicUrl>/api/v1/sys/oidc/callback. */
    publicUrl: v.pipe(
      HttpUrl('publicUrl'),
      v.check((s) => !URL.canParse(s) || ['', '/'].includes(new URL(s).pathname), 'publicUrl must be an origin (no path)'),
    ),
    /** The name on the console's button ("Sign in with …"); default: the issuer's host. */
    providerName: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(64))),
    scopes: v.optional(
      v.pipe(
        v.array(v.pipe(v.string(), v.regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, 'must be a scope token'))),
        v.check((s) => s.includes('openid'), 'must include openid'),
      ),
      [...OIDC_DEFAULTS.scopes],
    ),
    sessionSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(60), v.maxValue(7 * 24 * 3600)), OIDC_DEFAULTS.sessionSeconds),
    /** Console sessions held at once; a new one past it ends the oldest. */
    maxSessions: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100_000)), OIDC_DEFAULTS.maxSessions),
    /** Sign out also ends the provider's session (its end_session_endpoint; <publicUrl>/console/ must be a registered post-logout redirect). */
    providerLogout: v.optional(v.boolean(), false),
    /** The first mapping that matches decides the scopes and the tenant; no match: sign-in refused. */
    mappings: v.pipe(v.array(OidcMapping), v.minLength(1)),
  }),
);

export type OidcConfig = NonNullable<v.InferOutput<typeof OidcSchema>>;
export type OidcMappingConfig = OidcConfig['mappings'][number];

/** The redirect URI registered at the provider: the callback operation's path under publicUrl. */
export function oidcRedirectUri(publicUrl: string): string {
  return new URL('/api/v1/sys/oidc/callback', publicUrl).toString();
}
