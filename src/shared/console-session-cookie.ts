/**
 * The admin console's session cookie. Browsers do not tell ports apart, so a data port on the
 * admin's host name receives it too: the worker strips it before a request goes upstream.
 * Here (not in src/admin) because the worker must not import the admin.
 */
export const CONSOLE_SESSION_COOKIE = 'switchyard_session';
/** The console's sign-in in progress (state, nonce, PKCE verifier): stripped the same way. */
export const CONSOLE_SIGN_IN_COOKIE = 'switchyard_oidc';
/** What both names start with: the one cheap check on the hot path before any parsing. */
export const CONSOLE_COOKIE_PREFIX = 'switchyard_';

/**
 * A Cookie header value without the console's pairs (session and sign-in), or null when
 * nothing else is left. Callers check `value.includes(CONSOLE_COOKIE_PREFIX)` first: most
 * requests never get here.
 */
export function withoutConsoleSession(value: string): string | null {
  const kept: string[] = [];
  for (const pair of value.split(';')) {
    const eq = pair.indexOf('=');
    const name = (eq < 0 ? pair : pair.slice(0, eq)).trim();
    if (name === CONSOLE_SESSION_COOKIE || name === CONSOLE_SIGN_IN_COOKIE) continue;
    const trimmed = pair.trim();
    if (trimmed !== '') kept.push(trimmed);
  }
  return kept.length === 0 ? null : kept.join('; ');
}
