// The socket peer's address as text, for X-Forwarded-For and `key: ip` rate limits.
// uWS hands it out as 4 or 16 raw bytes; IPv4 (and IPv4-mapped IPv6) names are cached.

const v4Names = new Map<number, string>();

/** The first ten bytes of an IPv4-mapped IPv6 address are zero. */
function zeroPrefix(b: Uint8Array): boolean {
  for (let i = 0; i < 10; i++) if (b[i] !== 0) return false;
  return true;
}

/** uWS's binary peer address as text: IPv4 (also v4-mapped IPv6) from a small cache, else IPv6. */
export function formatAddress(ab: ArrayBuffer): string {
  const b = new Uint8Array(ab);
  let o = -1;
  if (b.length === 4) o = 0;
  else if (b.length === 16 && b[10] === 0xff && b[11] === 0xff && zeroPrefix(b)) o = 12;
  if (o >= 0) {
    const key = ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;
    let name = v4Names.get(key);
    if (name === undefined) {
      name = `${b[o]}.${b[o + 1]}.${b[o + 2]}.${b[o + 3]}`;
      if (v4Names.size > 4096) v4Names.clear();
      v4Names.set(key, name);
    }
    return name;
  }
  const groups: string[] = [];
  for (let i = 0; i + 1 < b.length; i += 2) groups.push(((b[i]! << 8) | b[i + 1]!).toString(16));
  // compress the longest run of zero groups (RFC 5952)
  let best = -1, bestLen = 0;
  for (let i = 0; i < groups.length; ) {
    if (groups[i] !== '0') { i++; continue; }
    let j = i;
    while (j < groups.length && groups[j] === '0') j++;
    if (j - i > bestLen && j - i > 1) { best = i; bestLen = j - i; }
    i = j;
  }
  if (best === -1) return groups.join(':');
  return `${groups.slice(0, best).join(':')}::${groups.slice(best + bestLen).join(':')}`;
}
