import { stringifySetCookie } from 'cookie';
import { parseCookies } from '../../shared/cookie-header.js';
import { CONSOLE_SESSION_COOKIE, CONSOLE_SIGN_IN_COOKIE } from '../../shared/console-session-cookie.js';

/**
 * The console session's cookie: HttpOnly, SameSite=Strict, sent to the admin API's paths only
 * (browsers do not tell ports apart: the narrower path keeps it off most of a data port on the same host).
 */
export const SESSION_COOKIE = CONSOLE_SESSION_COOKIE;
const SESSION_PATH = '/api/v1/';
/** The sign-in in progress (state, nonce, PKCE verifier): Lax, so the provider's redirect back carries it. */
export const SIGN_IN_COOKIE = CONSOLE_SIGN_IN_COOKIE;
/** The header every console call sends: a cookie-authenticated call without it is refused (CSRF). */
export const CONSOLE_HEADER = 'x-switchyard-console';

const SIGN_IN_PATH = '/api/v1/sys/oidc/';
const SIGN_IN_SECONDS = 600;

/** A cookie of a request, or undefined. */
export function requestCookie(header: string | string[] | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  return parseCookies(Array.isArray(header) ? header : [header])[name];
}

export function sessionCookie(id: string, seconds: number, secure: boolean): string {
  return stringifySetCookie(SESSION_COOKIE, id, { path: SESSION_PATH, httpOnly: true, sameSite: 'strict', secure, maxAge: seconds });
}

export function signInCookie(value: string, secure: boolean): string {
  return stringifySetCookie(SIGN_IN_COOKIE, value, { path: SIGN_IN_PATH, httpOnly: true, sameSite: 'lax', secure, maxAge: SIGN_IN_SECONDS });
}

/** Set-Cookie lines that remove a cookie from the browser. */
export function clearedSessionCookie(secure: boolean): string {
  return stringifySetCookie(SESSION_COOKIE, '', { path: SESSION_PATH, httpOnly: true, sameSite: 'strict', secure, maxAge: 0 });
}

export function clearedSignInCookie(secure: boolean): string {
  return stringifySetCookie(SIGN_IN_COOKIE, '', { path: SIGN_IN_PATH, httpOnly: true, sameSite: 'lax', secure, maxAge: 0 });
}
