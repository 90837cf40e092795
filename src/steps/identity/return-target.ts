/**
 * Where a browser may be sent back to after signing in or out: a path on this host only.
 * `//evil.example` and `/\evil.example` are read by browsers as another host, a scheme
 * (`https:`, `javascript:`) as another origin; control characters can split the header.
 * Null when the target is refused (open redirect).
 */
export function safeReturnTarget(target: string): string | null {
  if (target.length === 0 || target.length > 2048 || target[0] !== '/') return null;
  const second = target[1];
  if (second === '/' || second === '\\') return null;
  // Browsers drop tabs and newlines from URLs (WHATWG URL): `/\t/evil.example` is `//evil.example`.
  for (let i = 0; i < target.length; i++) {
    const c = target.charCodeAt(i);
    if (c <= 0x20 || c >= 0x7f || c === 0x5c) return null; // controls, space, backslash, bytes a Location cannot carry
  }
  return target;
}
