/**
 * The one path a request has: the route table matches it, steps read it, the upstream
 * receives it. Forwarding the client's bytes while routing on a cleaned-up copy let
 * `/admin-api/../public` be routed as `/public` yet served as `/admin-api` by an upstream
 * that resolves nothing. worker.json `paths` sets the slash policy (docs/reference.md "Paths").
 */
export interface PathPolicy {
  /** `%2F`, `%5C` and a raw `\`: refused, kept encoded (never a separator), or turned into `/`. */
  readonly escapedSlashes: 'reject' | 'keep' | 'decode';
  /** `//` counts as `/`. */
  readonly mergeSlashes: boolean;
}

export const DEFAULT_PATH_POLICY: PathPolicy = { escapedSlashes: 'reject', mergeSlashes: true };

/**
 * The normal form of an origin-form path (no query), or null when it is refused (400):
 * percent-encoded unreserved characters (ALPHA DIGIT - . _ ~) decoded, other
 * percent-encodings' hex upper case, dot segments resolved (RFC 3986 §6.2.2, §5.2.4),
 * slashes per `policy`, non-ASCII characters percent-encoded as UTF-8. Refused: `%00`,
 * a `%` not followed by two hex digits, percent-encoded bytes that are not UTF-8 (overlong
 * `%C0%AE` included), control characters, `#`, U+FFFD (bytes uWS could not decode).
 */
export function normalizePath(raw: string, policy: PathPolicy = DEFAULT_PATH_POLICY): string | null {
  const n = raw.length;
  if (n === 0 || raw.charCodeAt(0) !== SLASH) return null;
  // Fast path: nothing to decode, resolve, merge or refuse (a dot only matters at a segment's start).
  let prev = SLASH;
  for (let i = 1; i < n; i++) {
    const c = raw.charCodeAt(i);
    if (c <= 0x20 || c >= 0x7f || c === PERCENT || c === BACKSLASH || c === HASH || ((c === DOT || c === SLASH) && prev === SLASH)) {
      return slowPath(raw, policy);
    }
    prev = c;
  }
  return raw;
}

const SLASH = 0x2f;
const BACKSLASH = 0x5c;
const PERCENT = 0x25;
const DOT = 0x2e;
const HASH = 0x23;
const HEX = '0123456789ABCDEF';

function slowPath(raw: string, policy: PathPolicy): string | null {
  const out: string[] = [];
  const merge = policy.mergeSlashes;
  let seg = '';
  // UTF-8 of percent-encoded bytes: continuation bytes still due, and the range the next must be in.
  let due = 0;
  let lo = 0x80;
  let hi = 0xbf;
  // Ends the segment in `seg`. A last `.`, `..` or empty segment leaves a trailing slash.
  const close = (last: boolean) => {
    if (seg === '..') {
      out.pop();
      if (last) out.push('');
    } else if (seg === '.') {
      if (last) out.push('');
    } else if (seg !== '' || last || (!merge && out.length > 0)) out.push(seg);
    // Never a leading `//`, even unmerged: WHATWG URL parsers (Node's) read `//x/admin` as host x, path /admin.
    seg = '';
  };
  const n = raw.length;
  for (let i = 1; i < n; i++) {
    const c = raw.charCodeAt(i);
    if (c === PERCENT) {
      const v = i + 2 < n ? (hexValue(raw.charCodeAt(i + 1)) << 4) | hexValue(raw.charCodeAt(i + 2)) : -1;
      if (v <= 0) return null; // malformed (a negative nibble makes it negative) or %00
      i += 2;
      if (due > 0) {
        if (v < lo || v > hi) return null;
        due--;
        lo = 0x80;
        hi = 0xbf;
      } else if (v >= 0x80) {
        if (v >= 0xc2 && v <= 0xdf) due = 1;
        else if (v >= 0xe0 && v <= 0xef) {
          due = 2;
          if (v === 0xe0) lo = 0xa0; // overlong
          else if (v === 0xed) hi = 0x9f; // surrogates
        } else if (v >= 0xf0 && v <= 0xf4) {
          due = 3;
          if (v === 0xf0) lo = 0x90; // overlong
          else if (v === 0xf4) hi = 0x8f; // past U+10FFFF
        } else return null; // a continuation byte alone, or C0, C1, F5-FF
      }
      if (isUnreserved(v)) seg += String.fromCharCode(v);
      else if (v === SLASH || v === BACKSLASH) {
        if (policy.escapedSlashes === 'reject') return null;
        if (policy.escapedSlashes === 'decode') close(false);
        else seg += v === SLASH ? '%2F' : '%5C';
      } else seg += '%' + HEX[v >> 4] + HEX[v & 15];
      continue;
    }
    if (due > 0) return null; // a percent-encoded UTF-8 sequence cut short
    if (c === SLASH) close(false);
    else if (c === BACKSLASH) {
      if (policy.escapedSlashes === 'reject') return null;
      if (policy.escapedSlashes === 'decode') close(false);
      else seg += '%5C';
    } else if (c <= 0x20 || c === 0x7f || c === HASH || c === 0xfffd) return null;
    else if (c > 0x7f) {
      // uWS hands the target over as UTF-8 text: sent on, it is percent-encoded UTF-8.
      let j = i + 1;
      while (j < n && raw.charCodeAt(j) > 0x7f) j++;
      const run = raw.slice(i, j);
      if (run.includes('\ufffd')) return null;
      try {
        seg += encodeURIComponent(run);
      } catch {
        return null; // a lone surrogate
      }
      i = j - 1;
    } else seg += raw[i];
  }
  if (due > 0) return null;
  close(true);
  return '/' + out.join('/');
}

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  return -256;
}

/** RFC 3986 unreserved: ALPHA DIGIT - . _ ~ */
function isUnreserved(v: number): boolean {
  return (v >= 0x41 && v <= 0x5a) || (v >= 0x61 && v <= 0x7a) || (v >= 0x30 && v <= 0x39) || v === 0x2d || v === 0x2e || v === 0x5f || v === 0x7e;
}
