import type { HashOn } from '../../contracts/generation.js';

/** What a hash key is read from: the request as the exchange holds it. */
export interface KeySource {
  header(name: string): string | undefined;
  readonly query: string | null;
  readonly path: string;
  readonly clientAddress: string;
}

/** The request's hash key for `on`, or null when the request has none (it then goes round robin). */
export function hashKey(on: HashOn, req: KeySource): string | null {
  if ('header' in on) return req.header(on.header.toLowerCase()) ?? null;
  if ('cookie' in on) return listValue(req.header('cookie'), on.cookie, ';');
  if ('query' in on) return listValue(req.query ?? undefined, on.query, '&');
  if ('clientIp' in on) return req.clientAddress;
  return req.path;
}

/** The value of `name` in `a=1; b=2` (cookies) or `a=1&b=2` (a raw query); null when absent. */
function listValue(list: string | undefined, name: string, separator: string): string | null {
  if (!list) return null;
  for (const part of list.split(separator)) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}
