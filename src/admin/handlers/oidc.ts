import { Reply, type OpContext, type OpHandler } from '../op-context.js';
import type { Services } from '../services.js';
import { SvcError, asSvcError } from '../../shared/errors.js';
import { SESSION_COOKIE, SIGN_IN_COOKIE, clearedSessionCookie, clearedSignInCookie, requestCookie, sessionCookie, signInCookie } from '../oidc/console-cookies.js';
import { PAGE_HEADERS, signInFailedPage, wantsHtml } from '../oidc/sign-in-page.js';
import type { OidcSignIn } from '../oidc/oidc-sign-in.js';

/*
 * Console sign-in through admin.oidc (docs/console.md "Signing in with an OpenID provider").
 * Login and callback are browser navigations: they answer redirects, and a failure as a
 * page (as JSON to a client that does not ask for HTML).
 */

function signIn(services: Services): OidcSignIn {
  if (services.oidc === null) throw new SvcError('Svc.Auth.OidcOff');
  return services.oidc;
}

/** Whether the console offers "Sign in with …": asked before any credential exists. */
export const status: OpHandler<Services> = ({ services }) =>
  services.oidc === null ? { enabled: false } : { enabled: true, providerName: services.oidc.providerName, loginPath: '/api/v1/sys/oidc/login' };

/** A failure of a navigation: a page for a browser; JSON (thrown) otherwise. */
function failed(ctx: OpContext<Services>, err: unknown, secure: boolean): Reply {
  const e = asSvcError(err);
  if (e.code === 'Svc.Internal') ctx.services.log.error({ err, traceId: ctx.traceId }, 'console sign-in failed');
  else ctx.services.log.warn({ code: e.code, reason: e.message, traceId: ctx.traceId }, 'console sign-in refused');
  if (!wantsHtml(ctx.headers)) throw e;
  return new Reply(e.status, signInFailedPage(e, ctx.traceId), 'text/html; charset=utf-8', { ...PAGE_HEADERS, 'set-cookie': clearedSignInCookie(secure) });
}

/** Sends the browser to the provider with state, nonce and a PKCE challenge; their values ride in a 10-minute cookie. */
export const login: OpHandler<Services> = async (ctx) => {
  const oidc = signIn(ctx.services);
  try {
    const { url, pending } = await oidc.start();
    return new Reply(303, '', 'text/plain; charset=utf-8', { location: url, 'set-cookie': signInCookie(pending, oidc.secure) });
  } catch (err) {
    return failed(ctx, err, oidc.secure);
  }
};

/** The provider's redirect back: the code exchanged, the user mapped, a session started, the console opened. */
export const callback: OpHandler<Services> = async (ctx) => {
  const oidc = signIn(ctx.services);
  const { throttle } = ctx.services;
  try {
    // Each callback costs a call to the provider: an address that spent its failed-authentication allowance waits first.
    const wait = throttle.waitMs(ctx.peer);
    if (wait > 0) throw new SvcError('Svc.Auth.Throttled', undefined, { retryAfter: Math.max(1, Math.ceil(wait / 1000)) });
    const { identity, sessionId } = await oidc.finish(ctx.query, requestCookie(ctx.headers.cookie, SIGN_IN_COOKIE));
    ctx.services.log.info({ identity: identity.id, tenant: identity.tenant, scopes: identity.scopes, traceId: ctx.traceId }, 'console sign-in');
    return new Reply(303, '', 'text/plain; charset=utf-8', {
      location: '/console/',
      'set-cookie': [sessionCookie(sessionId, oidc.sessionSeconds, oidc.secure), clearedSignInCookie(oidc.secure)],
    });
  } catch (err) {
    if (err instanceof SvcError && err.code === 'Svc.Auth.SignInFailed') throttle.failed(ctx.peer);
    return failed(ctx, err, oidc.secure);
  }
};

/**
 * Ends the calling console session (the auth gate resolved it from the cookie). With
 * providerLogout, the answer names where the console sends the browser next.
 */
export const logout: OpHandler<Services> = async ({ services, headers, identity }) => {
  const oidc = signIn(services);
  const id = requestCookie(headers.cookie, SESSION_COOKIE);
  // A bearer token wins at the gate: only a session's own call ends it (a token has no session to end).
  if (identity?.session === undefined || id === undefined) return { signedOut: false, endSessionUrl: null };
  const endSessionUrl = await oidc.end(id);
  services.log.info({ identity: identity.id }, 'console sign-out');
  return new Reply(200, { signedOut: true, endSessionUrl }, undefined, { 'set-cookie': clearedSessionCookie(oidc.secure) });
};
