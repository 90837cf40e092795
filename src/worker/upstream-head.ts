// The upstream's raw response head (undici hands it over as `name, value, …` Buffers,
// straight from llhttp) turned into the head the client gets. Pure: unit-tested in
// test/unit/upstream-response-headers.test.ts.
import { isUtf8 } from 'node:buffer';
import { HOP_BY_HOP, connectionListed } from '../shared/hop-by-hop.js';

/** What the client-side head does with a field, decided once per known name. */
type Role = 'keep' | 'date' | 'length' | 'connection' | 'hop';

/**
 * Names most answers carry, and every hop-by-hop name (from the shared HOP_BY_HOP, so
 * a name that is not known here is never hop-by-hop), recognised from their bytes
 * without making a string (Buffer#toString is a native call per header). Only letters and '-': for those, `byte | 0x20` folds case exactly, and llhttp
 * admits only token bytes in a name, so no other byte can fold onto them.
 */
const COMMON = ['content-type', 'content-length', 'content-encoding', 'date', 'server', 'vary', 'set-cookie', 'cache-control', 'etag', 'last-modified', 'location', 'expires', 'age', 'accept-ranges'];
/**
 * Names whose value an upstream usually repeats answer after answer: the last value's
 * string is kept with its bytes and reused when the bytes match (a byte comparison
 * instead of a native decode).
 */
const REPEATING = new Set(['content-type', 'content-encoding', 'connection', 'server', 'vary', 'cache-control', 'accept-ranges']);

interface Known {
  name: string;
  bytes: Uint8Array;
  role: Role;
  /** Last value seen for a repeating name: its bytes (a copy) and its string. */
  last: { bytes: Uint8Array; text: string } | null;
  repeats: boolean;
}

function roleOf(name: string): Role {
  if (name === 'date') return 'date';
  if (name === 'content-length') return 'length';
  if (name === 'connection') return 'connection';
  return HOP_BY_HOP.has(name) ? 'hop' : 'keep';
}

const byLength: Known[][] = [];
for (const name of new Set([...COMMON, ...HOP_BY_HOP])) {
  (byLength[name.length] ??= []).push({ name, bytes: Buffer.from(name, 'latin1'), role: roleOf(name), last: null, repeats: REPEATING.has(name) });
}

function known(b: Buffer): Known | null {
  const candidates = byLength[b.length];
  if (candidates !== undefined) {
    for (let j = 0; j < candidates.length; j++) {
      const k = candidates[j]!.bytes;
      let i = 0;
      while (i < k.length && (b[i]! | 0x20) === k[i]) i++;
      if (i === k.length) return candidates[j]!;
    }
  }
  return null;
}

function nameOf(entry: Known | null, b: Buffer): string {
  return entry !== null ? entry.name : b.toString('latin1').toLowerCase();
}

/** A raw header name in lower case; well-known names come back as the same interned string. */
export function headerName(b: Buffer): string {
  return nameOf(known(b), b);
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * A value as the string uWS.js writes back as the same bytes. uWS.js sends strings as
 * UTF-8, so ASCII is read as latin1 (the fast decode) and a value with bytes above 0x7f
 * as UTF-8 when it is valid UTF-8. Other bytes (a legacy latin1 filename, say) cannot
 * round-trip through a string: they go out UTF-8 encoded (docs/reference.md, header bytes above 0x7f).
 */
function valueText(b: Buffer): string {
  const s = b.toString('latin1');
  for (let i = 0; i < b.length; i++) if (b[i]! > 0x7f) return isUtf8(b) ? b.toString('utf8') : s;
  return s;
}

/** A value as text (see valueText), reused from the last one when a repeating name repeats it. */
function headerValue(k: Known | null, b: Buffer): string {
  if (k === null || !k.repeats) return valueText(b);
  const last = k.last;
  if (last !== null && sameBytes(last.bytes, b)) return last.text;
  const decoded = valueText(b);
  // Copied: undici's raw Buffers are views of a socket read buffer that is reused.
  if (b.length <= 256) k.last = { bytes: Uint8Array.prototype.slice.call(b), text: decoded };
  return decoded;
}

/** Content-Length's digits (llhttp has checked them) as a number, without a string. */
function decimal(b: Buffer): number {
  let n = 0;
  for (let i = 0; i < b.length; i++) {
    const d = b[i]! - 48;
    if (d < 0 || d > 9) return Number(b.toString('latin1'));
    n = n * 10 + d;
  }
  return n;
}

/**
 * The client's view of the upstream head: names in lower case, hop-by-hop fields
 * dropped (also those named in Connection), Date and Content-Length left to uWS (it
 * writes its own; the length comes back as `length`, null when unsized), repeated
 * fields kept in their order. Values of dropped fields are never decoded, but for a
 * Transfer-Encoding other than plain `chunked` (`foreignCoding`: the answer is refused).
 */
export function responseHeaders(raw: readonly Buffer[]): { headers: [string, string][]; length: number | null; foreignCoding: boolean } {
  const out: [string, string][] = [];
  let length: number | null = null;
  let connection: string | undefined;
  let foreignCoding = false;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const entry = known(raw[i]!);
    switch (entry === null ? 'keep' : entry.role) {
      case 'date':
        continue;
      case 'hop':
        // undici undoes only `chunked`: any other transfer coding would reach the client as
        // unlabelled coded bytes once the (hop-by-hop) header is dropped.
        if (entry!.name === 'transfer-encoding' && !ONLY_CHUNKED.test(raw[i + 1]!.toString('latin1'))) foreignCoding = true;
        continue;
      case 'length':
        length = decimal(raw[i + 1]!);
        continue;
      case 'connection': {
        const v = headerValue(entry, raw[i + 1]!);
        connection = connection === undefined ? v : `${connection}, ${v}`;
        continue;
      }
      default:
        out.push([nameOf(entry, raw[i]!), headerValue(entry, raw[i + 1]!)]);
    }
  }
  const listed = connectionListed(connection);
  return { headers: listed === null ? out : out.filter(([k]) => !listed.has(k)), length, foreignCoding };
}

const ONLY_CHUNKED = /^[ \t]*chunked[ \t]*$/i;
