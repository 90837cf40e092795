// The bearer token lives in sessionStorage only: gone when the tab closes, never in
// localStorage or a cookie, and cleared by sign-out.
const KEY = 'switchyard.token';

export function getToken(): string | null {
  return sessionStorage.getItem(KEY);
}

export function setToken(token: string): void {
  sessionStorage.setItem(KEY, token);
}

export function clearToken(): void {
  sessionStorage.removeItem(KEY);
}
