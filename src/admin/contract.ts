import type { Access, Family } from './scopes.js';

/**
 * The interface contract: every admin operation, once. Routing, the scope check, the
 * OpenAPI document, the auth tests and the console navigation all read this table.
 * Pure data: the CLI and console may import it without pulling in server code.
 *
 * auth:  'none'     no token (health probe)
 *        'identity' any valid token, no scope (whoami and discovery)
 *        'scope'    `{family}:{read|write}` per access
 * level: 'instance' outside every tenant: a tenant-bound key is refused
 *        (unless auth is 'identity'); 'tenant' paths carry {tenant}.
 */
export interface Operation {
  id: string;
  method: 'GET' | 'POST';
  path: string;
  family: Family;
  access: Access;
  auth: 'none' | 'identity' | 'scope';
  level: 'instance' | 'tenant';
  summary: string;
  /** The operation takes a JSON request body. */
  body?: boolean;
}

export const OPERATIONS: readonly Operation[] = [
  { id: 'health', method: 'GET', path: '/healthz', family: 'sys', access: 'read', auth: 'none', level: 'instance', summary: 'Admin health probe' },
  { id: 'openapi', method: 'GET', path: '/api/v1/openapi.json', family: 'sys', access: 'read', auth: 'identity', level: 'instance', summary: 'This contract as OpenAPI 3.1' },
  { id: 'whoami', method: 'GET', path: '/api/v1/sys/whoami', family: 'sys', access: 'read', auth: 'identity', level: 'instance', summary: 'The calling identity: kind, tenant, masks, scopes' },
  { id: 'cluster.status', method: 'GET', path: '/api/v1/sys/cluster/status', family: 'cluster', access: 'read', auth: 'scope', level: 'instance', summary: 'Supervisor and worker status' },
];

export function operationById(id: string): Operation {
  const op = OPERATIONS.find((o) => o.id === id);
  if (!op) throw new Error(`no operation ${id}`);
  return op;
}
