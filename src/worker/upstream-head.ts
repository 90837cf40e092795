// The upstream's raw response head (undici hands it over as `name, value, …` Buffers,
// straight from llhttp) turned into the head the client gets. Pure: unit-tested in
// test/unit/upstream-response-headers.test.ts.
import { HOP_BY_HOP, connectionListed } from '../shared/hop-by-hop.js';

/**
 * Names most answers carry, recognised from their bytes without making a string
 * (Buffer#toString is a native call, about 0.1 µs a header here). Only letters and '-':
 * for those, `byte | 0x20` folds case exactly, and llhttp admits only token bytes in a
 * name, so no other byte can fold onto them.
 */
const KNOWN = [
  'content-type', 'content-length', 'content-encoding', 'date', 'connection', 'keep-alive', 'transfer-encoding',
  'server', 'vary', 'set-cookie', 'cache-control', 'etag', 'last-modified', 'location', 'expires', 'age',
  'accept-ranges', 'upgrade', 'trailer', 'te', 'proxy-authenticate', 'proxy-connection', 'uwebsockets',
];
const byLength: { name: string; bytes: Uint8Array }[][] = [];
for (const name of KNOWN) (byLength[name.length] ??= []).push({ name, bytes: Buffer.from(name, 'latin1') });

/** A raw header name in lower case; well-known names come back as the same interned string. */
export function headerName(b: Buffer): string {
  const candidates = byLength[b.length];
  if (candidates !== undefined) {
    for (let j = 0; j < candidates.length; j++) {
      const k = candidates[j]!.bytes;
      let i = 0;
      while (i < k.length && (b[i]! | 0x20) === k[i]) i++;
      if (i === k.length) return candidates[j]!.name;
    }
  }
  return b.toString('latin1').toLowerCase();
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
 * fields kept in their order. Values of dropped fields are never decoded.
 */
export function responseHeaders(raw: readonly Buffer[]): { headers: [string, string][]; length: number | null } {
  const out: [string, string][] = [];
  let length: number | null = null;
  let connection: string | undefined;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const k = headerName(raw[i]!);
    if (k === 'date') continue;
    if (k === 'content-length') {
      length = decimal(raw[i + 1]!);
      continue;
    }
    if (HOP_BY_HOP.has(k)) {
      if (k === 'connection') {
        const v = raw[i + 1]!.toString('latin1');
        connection = connection === undefined ? v : `${connection}, ${v}`;
      }
      continue;
    }
    out.push([k, raw[i + 1]!.toString('latin1')]);
  }
  const listed = connectionListed(connection);
  return { headers: listed === null ? out : out.filter(([k]) => !listed.has(k)), length };
}
