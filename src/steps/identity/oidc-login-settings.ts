import * as v from 'valibot';
import { HttpUrl } from '../sub-request.js';
import { IdentityFields } from './claims.js';

const EnvName = v.pipe(v.string(), v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name'));
const LocalPath = v.pipe(v.string(), v.regex(/^\/(?![/\\])[\x21-\x7e]*$/, 'must be a path on this host (starts with one /)'), v.maxLength(512));
const Seconds = (max: number) => v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(max));

/** The settings of `oidc-login` (docs/steps.md shows them with the step). */
export const OidcLoginSchema = v.pipe(
  v.strictObject({
    /** The provider's issuer; its discovery document is at `<issuer>/.well-known/openid-configuration`. */
    issuer: HttpUrl,
    clientId: v.pipe(v.string(), v.minLength(1), v.maxLength(256)),
    /** The client secret's environment variable (worker.json `secrets.env`). */
    clientSecretEnv: EnvName,
    /** The cookie key's environment variable: 32 bytes, base64/base64url (or 64 hex digits). */
    cookieSecretEnv: EnvName,
    /** The callback URL registered at the provider; its path is answered by the step. */
    redirectUri: HttpUrl,
    scopes: v.optional(v.pipe(v.array(v.pipe(v.string(), v.regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, 'must be a scope token'))), v.check((a) => a.includes('openid'), 'must include openid'), v.maxLength(32)), ['openid', 'email']),
    logoutPath: v.optional(LocalPath, '/logout'),
    /** Registered at the provider: where it sends the browser after RP-initiated logout. */
    postLogoutRedirectUri: v.optional(HttpUrl),
    /** Where logout lands when the provider has no end_session_endpoint. */
    postLogoutPath: v.optional(LocalPath, '/'),
    cookieName: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be a cookie name of letters, digits, _ and -')), 'sy_session'),
    cookiePath: v.optional(LocalPath, '/'),
    /** The longest a session lasts from sign-in, refreshes included. */
    sessionMaxAgeSeconds: v.optional(v.pipe(Seconds(30 * 86_400), v.minValue(60)), 28_800),
    /** Refresh this long before the tokens expire (when the provider gave a refresh token). */
    refreshBeforeSeconds: v.optional(Seconds(3_600), 60),
    /** How long a sign-in may take at the provider (the login cookie's lifetime). */
    loginTimeoutSeconds: v.optional(v.pipe(Seconds(3_600), v.minValue(30)), 600),
    /** Each call to the provider (discovery, token endpoint). */
    providerTimeoutMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(100), v.maxValue(30_000)), 5_000),
    /** How long the provider's discovery document is kept per worker before it is fetched again. */
    metadataTtlSeconds: v.optional(v.pipe(Seconds(86_400), v.minValue(10)), 3_600),
    ...IdentityFields,
  }),
  v.check((s) => new URL(s.redirectUri).pathname !== s.logoutPath, 'redirectUri and logoutPath must differ'),
  v.check((s) => !/[?#]/.test(s.redirectUri), 'redirectUri must not carry a query or fragment'),
);

export type OidcLoginSettings = v.InferOutput<typeof OidcLoginSchema>;

export const OIDC_LOGIN_EXAMPLE = {
  issuer: 'https://id.example.com',
  clientId: 'gateway',
  clientSecretEnv: 'OIDC_CLIENT_SECRET',
  cookieSecretEnv: 'OIDC_COOKIE_KEY',
  redirectUri: 'https://app.example.com/oauth/callback',
  postLogoutRedirectUri: 'https://app.example.com/',
  scopes: ['openid', 'email', 'offline_access'],
  claims: { email: 'x-user-email', sub: 'x-user-id' },
  requiredClaims: { email_verified: true },
};
