import * as client from 'openid-client';
import type { Flow, StepEnv, StepOutcome, StepReply } from '../step.js';
import { stepError } from '../reply.js';
import type { ProviderMetadata } from './provider-metadata.js';
import { setCookieLine, type CookieScope, type SealedCookie } from './sealed-cookie.js';
import type { Session, Sessions } from './oidc-session.js';
import { safeReturnTarget } from './return-target.js';
import { failureOf, providerRefused } from './provider-errors.js';
import type { OidcLoginSettings } from './oidc-login-settings.js';

/** A sign-in in progress: what the callback checks (the login cookie). */
export interface LoginState {
  /** state, nonce, PKCE code verifier, return target. */
  s: string;
  n: string;
  v: string;
  r: string;
}

const NO_STORE = ['cache-control', 'no-store'] as const;

/**
 * The browser side of `oidc-login`: the redirect to the provider (authorization code with
 * PKCE S256, state and nonce), the callback that exchanges the code, and the logout.
 * Built once per step; every answer that does not depend on the request is built here.
 */
export class OidcLoginFlow {
  readonly callbackPath: string;
  private readonly redirectUri: URL;
  /** An https redirectUri means browsers reach the gateway over https (a TLS proxy in front, say): cookies are Secure then too. */
  private readonly httpsOrigin: boolean;
  private readonly unavailable = stepError('Svc.Data.AuthUnavailable', 'The identity provider could not be reached');
  private readonly failed = stepError('Svc.Data.Unauthenticated', 'The sign-in could not be completed (expired, replayed or refused); load the page again');
  private readonly tooLarge = stepError('Svc.Data.AuthUnavailable', 'The session does not fit in a cookie (too many or too large claims)');

  constructor(
    private readonly s: OidcLoginSettings,
    private readonly metadata: ProviderMetadata<client.Configuration>,
    private readonly logins: SealedCookie<LoginState>,
    private readonly sessions: Sessions,
    private readonly check: (flow: Flow, claims: Record<string, unknown>) => StepOutcome,
    private readonly log: StepEnv['log'],
    private readonly tenant: string,
  ) {
    this.redirectUri = new URL(s.redirectUri);
    this.callbackPath = this.redirectUri.pathname;
    this.httpsOrigin = this.redirectUri.protocol === 'https:';
  }

  scope(flow: Flow): CookieScope {
    return { path: this.s.cookiePath, secure: this.httpsOrigin || flow.req.scheme === 'https' };
  }

  private loginScope(flow: Flow): CookieScope {
    return { path: this.callbackPath, secure: this.httpsOrigin || flow.req.scheme === 'https' };
  }

  /** 302 to the provider's authorization endpoint; the request's own target is where the callback returns. */
  async signIn(flow: Flow): Promise<StepOutcome> {
    let config: client.Configuration;
    try {
      config = await this.metadata.get();
    } catch (err) {
      return this.providerDown('sign-in', err);
    }
    const req = flow.req;
    const target = safeReturnTarget(req.query === null ? req.path : `${req.path}?${req.query}`) ?? '/';
    const login: LoginState = { s: client.randomState(), n: client.randomNonce(), v: client.randomPKCECodeVerifier(), r: target };
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: this.s.redirectUri,
      scope: this.s.scopes.join(' '),
      code_challenge: await client.calculatePKCECodeChallenge(login.v),
      code_challenge_method: 'S256',
      state: login.s,
      nonce: login.n,
    });
    const sealed = this.logins.seal(login, Date.now() / 1000 + this.s.loginTimeoutSeconds);
    return redirect(url.href, [setCookieLine(this.logins.name, sealed, this.s.loginTimeoutSeconds, this.loginScope(flow))]);
  }

  /** The provider sent the browser back: the code is exchanged, checked, and a session begins. */
  async callback(flow: Flow): Promise<StepOutcome> {
    const scope = this.loginScope(flow);
    // The login cookie is spent whatever happens: a callback cannot be replayed with it.
    flow.addResponseHeader('set-cookie', setCookieLine(this.logins.name, '', 0, scope));
    const login = this.logins.open(flow.req.cookie(this.logins.name));
    if (login === null) return this.failed;
    let config: client.Configuration;
    try {
      config = await this.metadata.get();
    } catch (err) {
      return this.providerDown('callback', err);
    }
    const current = new URL(this.redirectUri);
    current.search = flow.req.query ?? '';
    let tokens;
    try {
      tokens = await client.authorizationCodeGrant(config, current, { pkceCodeVerifier: login.v, expectedState: login.s, expectedNonce: login.n, idTokenExpected: true });
    } catch (err) {
      return providerRefused(err) ? this.failed : this.providerDown('callback', err);
    }
    const now = Math.floor(Date.now() / 1000);
    const session = this.sessions.fromTokens(tokens, now);
    if (session === null) return this.failed;
    // Required claims and scopes refuse here too: no session is made for an identity the route refuses.
    const refused = this.check(flow, { ...(tokens.claims() ?? {}), ...(tokens.scope !== undefined ? { scope: tokens.scope } : {}) });
    if (refused !== undefined) return refused;
    const sealed = this.sessions.seal(session);
    if (sealed === null) return this.tooLarge;
    const line = setCookieLine(this.sessions.cookie.name, sealed.value, this.sessions.cookieExpiry(sealed.session) - now, this.scope(flow));
    return redirect(safeReturnTarget(login.r) ?? '/', [line]);
  }

  /** Clears the session and sends the browser to the provider's end_session_endpoint, else to postLogoutPath. */
  async logout(flow: Flow): Promise<StepOutcome> {
    const session = this.sessions.cookie.open(flow.req.cookie(this.sessions.cookie.name));
    const clear = setCookieLine(this.sessions.cookie.name, '', 0, this.scope(flow));
    let config: client.Configuration | null = null;
    try {
      config = await this.metadata.get();
    } catch {
      // The session ends here whatever the provider's state: the gateway's own page then.
    }
    if (config?.serverMetadata().end_session_endpoint === undefined) return redirect(this.s.postLogoutPath, [clear]);
    const params: Record<string, string> = { client_id: this.s.clientId };
    if (this.s.postLogoutRedirectUri !== undefined) params.post_logout_redirect_uri = this.s.postLogoutRedirectUri;
    if (session?.i !== undefined) params.id_token_hint = session.i;
    return redirect(client.buildEndSessionUrl(config!, params).href, [clear]);
  }

  /**
   * New tokens for a session near its expiry; null when the provider refuses (or cannot be
   * reached): the session ends.
   */
  async refresh(session: Session): Promise<{ session: Session; value: string } | null> {
    try {
      const config = await this.metadata.get();
      const tokens = await client.refreshTokenGrant(config, session.r!);
      const next = this.sessions.fromTokens(tokens, Math.floor(Date.now() / 1000), session);
      if (next === null) return null;
      return this.sessions.seal(next);
    } catch (err) {
      if (!providerRefused(err)) this.providerDown('refresh', err);
      return null;
    }
  }

  /** 503, and a line for the operator: the error's code or name only (its message may quote the provider's answer). */
  private providerDown(during: string, err: unknown): StepReply {
    this.log.warn({ tenant: this.tenant, step: 'oidc-login', during, error: failureOf(err) }, 'identity provider call failed');
    return this.unavailable;
  }
}

function redirect(location: string, cookies: string[]): StepReply {
  return { status: 302, headers: [['location', location], [...NO_STORE], ...cookies.map((c): [string, string] => ['set-cookie', c])], body: '' };
}
