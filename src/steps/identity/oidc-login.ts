import * as client from 'openid-client';
import { defineStep } from '../step.js';
import { parseSealingKey } from '../../shared/secret-box.js';
import { claimHeaders, identityApplier } from './claims.js';
import { OIDC_LOGIN_EXAMPLE, OidcLoginSchema } from './oidc-login-settings.js';
import { SealedCookie } from './sealed-cookie.js';
import { Sessions, cookieBinding, sessionClaims, type Session } from './oidc-session.js';
import { OidcLoginFlow, type LoginState } from './oidc-login-flow.js';
import { SessionGate, type Renewal } from './oidc-session-gate.js';
import { ProviderMetadata } from './provider-metadata.js';
import { providerFetch } from './provider-fetch.js';

/** After a failed discovery, this long before a worker asks the provider again. */
const DISCOVERY_RETRY_MS = 5_000;

/**
 * Browser sign-in at the gateway: OpenID Connect authorization code flow with PKCE
 * (openid-client), the session in an encrypted cookie, refreshed before expiry, the ID
 * token's claims upstream as headers.
 */
export const oidcLogin = defineStep({
  code: 'oidc-login',
  summary: 'Browser sign-in with an OpenID provider (authorization code + PKCE); the session in an encrypted cookie, claims upstream as headers',
  details:
    'A request without a valid session is redirected (302) to the provider when it is a GET or HEAD whose `Accept` asks for HTML; any other gets 401. The route must cover `redirectUri`\'s path (the callback, answered by the step) and `logoutPath`. ' +
    'The callback exchanges the code at the token endpoint (`client_secret_basic`: `clientId` and the secret in `clientSecretEnv`), checks state, nonce and PKCE, and redirects to the page first asked for (a path on this host only; anything else lands on `/`). `redirectUri` and `postLogoutRedirectUri` are where the browser goes, normally the gateway itself: they are registered at the provider, not held to the upstream allow-list. ' +
    'The session cookie (`cookieName`, `HttpOnly`, `SameSite=Lax`, `Secure` when the request came over TLS or `redirectUri` is https, as behind a TLS-terminating proxy) is sealed with AES-256-GCM under the 32-byte key in `cookieSecretEnv` (base64, base64url or 64 hex digits), bound to its name, tenant, route and the settings that decide identity (`issuer`, `clientId`, `claims`, `requiredClaims`, `requiredScopes`): changing them signs everyone out. It holds the subject, the mapped and required claims, the expiry, the refresh token, and the ID token when it fits under 4000 bytes; never the access token. ' +
    'It is refreshed `refreshBeforeSeconds` before the tokens expire (the new cookie comes with that response); a refused refresh ends the session. `logoutPath` clears it and redirects to the provider\'s `end_session_endpoint` (with `post_logout_redirect_uri`, `client_id` and the ID token as hint when kept), else to `postLogoutPath`. ' +
    'Both environment variables must be allowed by worker.json `secrets.env`. `issuer` is held to the tenant\'s upstream allow-list at publish, and every call to the provider (discovery, token endpoint) goes through the worker\'s guarded service connections. An `http://` issuer (its endpoints then may be http too) is accepted: use it only on a network you trust, as the allow-list lets the tenant. The discovery document is fetched by a worker\'s first sign-in and kept `metadataTtlSeconds`. More: docs/reference.md, "Browser sign-in (oidc-login)".',
  statuses: [
    { status: 302, when: 'to the provider (no session, a browser GET), after the callback, after logout' },
    { status: 401, when: 'no valid session and not a browser GET; a callback that fails its checks' },
    { status: 403, when: 'the identity lacks a required claim or scope' },
    { status: 503, when: 'the provider cannot be reached for sign-in or the callback' },
  ],
  example: OIDC_LOGIN_EXAMPLE,
  schema: OidcLoginSchema,
  ownedHeaders: (s) => claimHeaders(s),
  envRefs: (s) => [
    { pointer: '/clientSecretEnv', name: s.clientSecretEnv },
    { pointer: '/cookieSecretEnv', name: s.cookieSecretEnv },
  ],
  // The service the gateway calls. redirectUri and postLogoutRedirectUri are where the
  // browser goes (the gateway itself, which the allow-list rightly refuses as a service).
  urlRefs: (s) => [{ pointer: '/issuer', url: s.issuer }],
  timeoutMs: 30_000,
  create(s, ctx) {
    // Read from the gateway's environment (which workers inherit); the trial build reports a missing or malformed one.
    const secret = process.env[s.clientSecretEnv];
    if (!secret) throw new Error(`environment variable ${s.clientSecretEnv} (clientSecretEnv) is not set`);
    const key = parseSealingKey(process.env[s.cookieSecretEnv]);
    if (key === null) throw new Error(`environment variable ${s.cookieSecretEnv} (cookieSecretEnv) must hold a 32-byte key, base64 or base64url encoded (or 64 hex digits)`);
    const binding = cookieBinding(s, ctx.tenant, ctx.bucket);
    const sessions = new Sessions(new SealedCookie<Session>(key, s.cookieName, binding), sessionClaims(s), s.sessionMaxAgeSeconds);
    const logins = new SealedCookie<LoginState>(key, `${s.cookieName}_login`, binding);
    const insecure = s.issuer.startsWith('http:');
    const state = ctx.state(() => ({
      metadata: new ProviderMetadata<client.Configuration>(
        () =>
          client.discovery(new URL(s.issuer), s.clientId, undefined, client.ClientSecretBasic(secret), {
            [client.customFetch]: providerFetch(ctx.env, ctx.tenant),
            timeout: s.providerTimeoutMs / 1000,
            execute: insecure ? [client.allowInsecureRequests] : [],
          }),
        s.metadataTtlSeconds * 1000,
        DISCOVERY_RETRY_MS,
      ),
      // One refresh per refresh token at a time: a page's parallel requests share it.
      refreshing: new Map<string, Promise<Renewal>>(),
    }));
    const check = identityApplier(s);
    const login = new OidcLoginFlow(s, state.metadata, logins, sessions, check, ctx.env.log, ctx.tenant);
    const gate = new SessionGate(sessions, login, check, s.refreshBeforeSeconds, state.refreshing);
    return (flow) => {
      const path = flow.req.path;
      if (path === login.callbackPath) return login.callback(flow);
      if (path === s.logoutPath) return login.logout(flow);
      return gate.pass(flow);
    };
  },
});
