/**
 * The path routes are matched on: dot segments resolved (RFC 3986 §5.2.4), including
 * percent-encoded dots, so `/a/../admin` and `/a/%2e%2e/admin` match as `/admin` and
 * cannot slip past a prefix rule. The upstream still receives the path byte for byte.
 */
export function normalizePath(path: string): string {
  // Fast path: nothing to resolve.
  if (!path.includes('.') && !path.includes('%')) return path;
  const decoded = path.replace(/%2e/gi, '.');
  if (!decoded.includes('.')) return path;
  const out: string[] = [];
  const segs = decoded.split('/');
  for (let i = 1; i < segs.length; i++) {
    const s = segs[i]!;
    if (s === '.') {
      if (i === segs.length - 1) out.push('');
    } else if (s === '..') {
      out.pop();
      if (i === segs.length - 1) out.push('');
    } else out.push(s);
  }
  return '/' + out.join('/');
}
