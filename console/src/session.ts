// The bearer token lives in sessionStorage only: gone when the tab closes, never in
// localStorage or a cookie, and cleared by sign-out. A console session (sign-in through
// the OpenID provider) is an HttpOnly cookie the tab cannot read: only that it uses one is kept.
const KEY = 'switchyard.token';
const MODE = 'switchyard.signedInWith';

export function getToken(): string | null {
  return sessionStorage.getItem(KEY);
}

export function setToken(token: string): void {
  sessionStorage.setItem(KEY, token);
}

export function clearToken(): void {
  sessionStorage.removeItem(KEY);
  sessionStorage.removeItem(MODE);
}

/** The tab is signed in through the provider: its calls carry the session cookie, sign-out ends it server-side. */
export function usesProviderSession(): boolean {
  return sessionStorage.getItem(MODE) === 'oidc';
}

export function setProviderSession(): void {
  sessionStorage.setItem(MODE, 'oidc');
}
