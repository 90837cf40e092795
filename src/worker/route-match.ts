import type { Target } from './data-server.js';
import { envelopeReply } from './envelope.js';
import type { RouteTable } from '../shared/route-table.js';
import { routingHost } from '../shared/route-table.js';

/**
 * Phase 1 of a request (the others are its Exchange's methods): the route, from method,
 * path and Host alone, before any await. It runs in the data server's callback before
 * any owner exists: a fixed reply, and the NoRoute envelope, never get one.
 */
export function match<T>(table: RouteTable<T | Target>, method: string, path: string, host: string, rid: string, traceId: () => string): T | Target {
  return table.lookup(method, routingHost(host), path) ?? envelopeReply('Svc.Data.NoRoute', rid || traceId());
}
