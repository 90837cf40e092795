/**
 * Whether a Host header value is `host[:port]` (RFC 9110 §7.2, RFC 3986 §3.2.2): a name of
 * letters, digits, `-`, `.`, `_`, `~` (IPv4 included), or a bracketed IPv6 address; a port
 * of 1-5 digits up to 65535. Stricter than reg-name on purpose: sub-delims (`,`, `;`, `*`, …)
 * and percent-encodings name no real host, and a `,` or a space is how two hosts get
 * smuggled into one value. Empty is allowed: RFC 9112 §3.2 has clients send it when the
 * target has no authority. A char-class scan, no allocation: it runs on every request.
 */
export function isValidHost(h: string): boolean {
  const n = h.length;
  if (n === 0) return true;
  let i = 0;
  if (h.charCodeAt(0) === 0x5b /* [ */) {
    const end = h.indexOf(']');
    if (end < 3) return false;
    let colons = 0;
    for (i = 1; i < end; i++) {
      const c = h.charCodeAt(i);
      if (c === 0x3a) colons++;
      else if (!isHexDigit(c) && c !== 0x2e) return false;
    }
    if (colons < 2) return false;
    i = end + 1;
  } else {
    for (; i < n; i++) {
      const c = h.charCodeAt(i);
      if (c === 0x3a /* : */) break;
      if (!isNameChar(c)) return false;
    }
    if (i === 0) return false;
  }
  if (i === n) return true;
  if (h.charCodeAt(i) !== 0x3a) return false;
  const digits = n - i - 1;
  if (digits < 1 || digits > 5) return false;
  let port = 0;
  for (let j = i + 1; j < n; j++) {
    const d = h.charCodeAt(j) - 0x30;
    if (d < 0 || d > 9) return false;
    port = port * 10 + d;
  }
  return port <= 65535;
}

function isNameChar(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2e || c === 0x5f || c === 0x7e;
}

function isHexDigit(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);
}
