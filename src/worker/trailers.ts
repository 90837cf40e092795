import type { Trailers } from './engine/contract.js';
import { HOP_BY_HOP } from '../shared/hop-by-hop.js';

/**
 * Names that never travel as trailers (RFC 9110 §6.5.1: framing, routing, content
 * metadata), besides the hop-by-hop ones: node:http2 would refuse the frame, and an
 * HTTP/1.1 peer must not read them after the body.
 */
const NOT_TRAILERS: ReadonlySet<string> = new Set([...HOP_BY_HOP, 'content-length', 'content-type', 'content-encoding', 'content-range', 'host', 'trailer', 'authorization', 'set-cookie']);

/**
 * An upstream's trailers as undici hands them (flat `name, value, …`; Buffers from
 * llhttp, strings from the HTTP/2 client) as the client gets them: names lower case,
 * the names above dropped. null when none is left.
 */
export function relayedTrailers(raw: readonly (string | Buffer)[] | null | undefined): Trailers | null {
  if (!raw || raw.length < 2) return null;
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toString().toLowerCase();
    if (name.length === 0 || name.charCodeAt(0) === 58 /* ':' */ || NOT_TRAILERS.has(name)) continue;
    out.push([name, raw[i + 1]!.toString()]);
  }
  return out.length ? out : null;
}
