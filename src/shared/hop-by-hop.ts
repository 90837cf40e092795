/** RFC 9110 §7.6.1 connection-specific fields, plus the legacy ones proxies also drop. */
export const HOP_BY_HOP: ReadonlySet<string> = new Set([
  'connection',
  'proxy-connection',
  'keep-alive',
  'te',
  'transfer-encoding',
  'upgrade',
  'trailer',
  'proxy-authenticate',
  'proxy-authorization',
]);

/**
 * Names configuration may not set on an answer: the message's framing (the gateway writes its
 * own Content-Length or chunked coding; a second one corrupts the message) and the
 * connection's own (hop-by-hop) headers.
 */
export const MANAGED_HEADERS: ReadonlySet<string> = new Set([...HOP_BY_HOP, 'content-length']);

/** Lower-case names listed in a Connection header ("close, x-foo"): hop-by-hop too. */
export function connectionListed(value: string | string[] | undefined): Set<string> | null {
  if (!value) return null;
  // The common values name no extra header: skip the Set.
  if (typeof value === 'string' && (value.length === 10 || value.length === 5)) {
    const v = value.toLowerCase();
    if (v === 'keep-alive' || v === 'close') return null;
  }
  const s = new Set<string>();
  for (const part of (Array.isArray(value) ? value.join(',') : value).split(',')) {
    const t = part.trim().toLowerCase();
    if (t) s.add(t);
  }
  return s.size ? s : null;
}

/** Whether a Connection header asks to close the connection ("close", "keep-alive, close"). */
export function asksClose(value: string): boolean {
  return value.length === 5 ? value.toLowerCase() === 'close' : (connectionListed(value)?.has('close') ?? false);
}
