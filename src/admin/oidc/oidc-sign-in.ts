import * as client from 'openid-client';
import { SvcError } from '../../shared/errors.js';
import { oidcRedirectUri, type OidcConfig } from '../../shared/gateway-config-oidc.js';
import type { Identity } from '../identity.js';
import type { ConsoleSessions } from './console-sessions.js';
import { firstMatch, mappedClaims, sessionIdentity } from './claim-mapping.js';
import { providerError } from './provider-errors.js';

/** What the sign-in cookie carries between the redirect to the provider and the callback. */
interface PendingSignIn {
  state: string;
  nonce: string;
  verifier: string;
}

/** Seconds a call to the provider may take (discovery, token exchange, userinfo). */
const PROVIDER_TIMEOUT_S = 5;

/**
 * Console sign-in through admin.oidc's provider, by openid-client: authorization code with
 * PKCE, state and nonce. The provider's metadata is discovered at the first sign-in (not
 * at boot: a provider down then must not stop the gateway) and kept once it answered.
 */
export class OidcSignIn {
  readonly redirectUri: string;
  /** Cookies are Secure when browsers reach the admin port over https (publicUrl). */
  readonly secure: boolean;
  readonly providerName: string;
  private discovery: Promise<client.Configuration> | null = null;

  constructor(
    private readonly settings: OidcConfig,
    private readonly clientSecret: string,
    readonly sessions: ConsoleSessions,
  ) {
    this.redirectUri = oidcRedirectUri(settings.publicUrl);
    this.secure = new URL(settings.publicUrl).protocol === 'https:';
    this.providerName = settings.providerName ?? new URL(settings.issuer).host;
  }

  get sessionSeconds(): number {
    return this.settings.sessionSeconds;
  }

  /** The provider's authorization URL, and the sign-in cookie's value that the callback checks against. */
  async start(): Promise<{ url: string; pending: string }> {
    const config = await this.provider();
    const pending: PendingSignIn = { state: client.randomState(), nonce: client.randomNonce(), verifier: client.randomPKCECodeVerifier() };
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: this.redirectUri,
      scope: this.settings.scopes.join(' '),
      code_challenge: await client.calculatePKCECodeChallenge(pending.verifier),
      code_challenge_method: 'S256',
      state: pending.state,
      nonce: pending.nonce,
    });
    return { url: url.href, pending: Buffer.from(JSON.stringify(pending)).toString('base64url') };
  }

  /**
   * The callback: the code exchanged (state, nonce and PKCE checked by openid-client), the
   * claims mapped, a session made. Throws SignInFailed, NotMapped or ProviderUnavailable.
   */
  async finish(query: URLSearchParams, pendingCookie: string | undefined): Promise<{ identity: Identity; sessionId: string }> {
    const pending = parsePending(pendingCookie);
    const config = await this.provider();
    const current = new URL(this.redirectUri);
    current.search = query.toString();
    let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
    try {
      tokens = await client.authorizationCodeGrant(config, current, { pkceCodeVerifier: pending.verifier, expectedState: pending.state, expectedNonce: pending.nonce, idTokenExpected: true });
    } catch (err) {
      throw providerError(err);
    }
    const claims = await this.claimsOf(config, tokens);
    const sub = String(claims.sub);
    const mapping = firstMatch(this.settings.mappings, claims);
    if (mapping === null) throw new SvcError('Svc.Auth.NotMapped', `No admin.oidc mapping matches the claims of oidc:${sub}; ask an operator to add one`, { identity: `oidc:${sub}` });
    const expiresAt = Date.now() + this.settings.sessionSeconds * 1000;
    const email = typeof claims.email === 'string' ? claims.email : null;
    const identity = sessionIdentity(sub, email, mapping, expiresAt);
    const sessionId = this.sessions.create(identity, expiresAt, this.settings.providerLogout ? (tokens.id_token ?? null) : null);
    return { identity, sessionId };
  }

  /** Ends the session; with providerLogout, where the browser goes to end the provider's too. */
  async end(sessionId: string): Promise<string | null> {
    const ended = this.sessions.end(sessionId);
    if (ended?.idToken == null) return null;
    const config = await this.provider().catch(() => null);
    if (config === null || config.serverMetadata().end_session_endpoint === undefined) return null;
    const back = new URL('/console/', this.settings.publicUrl).href;
    return client.buildEndSessionUrl(config, { id_token_hint: ended.idToken, post_logout_redirect_uri: back }).href;
  }

  /** The ID token's claims; a claim a mapping reads that the ID token lacks is asked of the userinfo endpoint. */
  private async claimsOf(config: client.Configuration, tokens: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers): Promise<Record<string, unknown>> {
    const claims: Record<string, unknown> = { ...tokens.claims() };
    const missing = mappedClaims(this.settings.mappings).some((c) => claims[c] === undefined);
    if (!missing || config.serverMetadata().userinfo_endpoint === undefined) return claims;
    try {
      const info = await client.fetchUserInfo(config, tokens.access_token, String(claims.sub));
      return { ...info, ...claims };
    } catch (err) {
      throw providerError(err);
    }
  }

  private provider(): Promise<client.Configuration> {
    const { issuer, clientId } = this.settings;
    const insecure = new URL(issuer).protocol === 'http:'; // loopback only: the schema refuses other http issuers
    this.discovery ??= client
      .discovery(new URL(issuer), clientId, undefined, client.ClientSecretBasic(this.clientSecret), {
        timeout: PROVIDER_TIMEOUT_S,
        ...(insecure ? { execute: [client.allowInsecureRequests] } : {}),
      })
      .catch((err: unknown) => {
        this.discovery = null; // the next sign-in asks again
        throw providerError(err, issuer);
      });
    return this.discovery;
  }
}

function parsePending(cookie: string | undefined): PendingSignIn {
  try {
    const p = JSON.parse(Buffer.from(cookie ?? '', 'base64url').toString('utf8')) as PendingSignIn;
    if (typeof p.state === 'string' && typeof p.nonce === 'string' && typeof p.verifier === 'string') return p;
  } catch {
    // refused below
  }
  throw new SvcError('Svc.Auth.SignInFailed', 'No sign-in is in progress in this browser (its cookie is missing or expired): start it again from the console');
}
