import type { HashOn } from '../../contracts/generation.js';
import { queryValue, type QueryPair } from '../url-query.js';

/** What a hash key is read from: the request as the exchange holds it (its query and cookies parsed once, by the shared parsers). */
export interface KeySource {
  header(name: string): string | undefined;
  readonly queryPairs: readonly QueryPair[];
  cookie(name: string): string | undefined;
  readonly path: string;
  readonly clientAddress: string;
}

/** The request's hash key for `on`, or null when the request has none (it then goes round robin). */
export function hashKey(on: HashOn, req: KeySource): string | null {
  if ('header' in on) return req.header(on.header.toLowerCase()) ?? null;
  if ('cookie' in on) return req.cookie(on.cookie) ?? null;
  if ('query' in on) return queryValue(req.queryPairs, on.query);
  if ('clientIp' in on) return req.clientAddress;
  return req.path;
}
