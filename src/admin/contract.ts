import type { Access } from './scopes.js';
import type { Family } from '../contracts/scopes.js';

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
  { id: 'health', method: 'GET', path: '/healthz', family: 'sys', access: 'read', auth: 'none', level: 'instance', summary: 'Liveness probe: the process answers' },
  { id: 'ready', method: 'GET', path: '/readyz', family: 'sys', access: 'read', auth: 'none', level: 'instance', summary: 'Readiness probe: 200 when every worker serves the current generation and the store answers within its bound, else 503; the body says which part is not ready' },
  { id: 'openapi', method: 'GET', path: '/api/v1/openapi.json', family: 'sys', access: 'read', auth: 'identity', level: 'instance', summary: 'This contract as OpenAPI 3.1' },
  { id: 'whoami', method: 'GET', path: '/api/v1/sys/whoami', family: 'sys', access: 'read', auth: 'identity', level: 'instance', summary: 'The calling identity: kind, tenant, masks, scopes' },
  { id: 'cluster.status', method: 'GET', path: '/api/v1/sys/cluster/status', family: 'cluster', access: 'read', auth: 'scope', level: 'instance', summary: 'Supervisor and worker status' },
  { id: 'console', method: 'GET', path: '/api/v1/sys/console', family: 'sys', access: 'read', auth: 'identity', level: 'instance', summary: "The console's navigation and feature states for the calling identity (?tenant= for system keys)" },
  { id: 'workers.restart', method: 'POST', path: '/api/v1/sys/workers/restart', family: 'sys', access: 'write', auth: 'scope', level: 'instance', summary: 'Replace every worker, one at a time: each replacement listens before the worker it replaces drains (202 with the progress; 409 while one runs)' },
  { id: 'workers.restart.status', method: 'GET', path: '/api/v1/sys/workers/restart', family: 'sys', access: 'read', auth: 'scope', level: 'instance', summary: "The latest workers restart's progress: each worker replaced (old pid, new pid), running, done or failed" },
  { id: 'oidc.status', method: 'GET', path: '/api/v1/sys/oidc', family: 'sys', access: 'read', auth: 'none', level: 'instance', summary: 'Whether console sign-in through an OpenID provider is on (admin.oidc), and the provider\'s name for its button' },
  { id: 'oidc.login', method: 'GET', path: '/api/v1/sys/oidc/login', family: 'sys', access: 'read', auth: 'none', level: 'instance', summary: 'Starts a console sign-in: 303 to the provider (authorization code with PKCE, state, nonce in a 10-minute HttpOnly cookie); 503 when the provider cannot be reached' },
  { id: 'oidc.callback', method: 'GET', path: '/api/v1/sys/oidc/callback', family: 'sys', access: 'read', auth: 'none', level: 'instance', summary: "The provider's redirect back: the code exchanged, the user mapped (403 NotMapped without a matching admin.oidc mapping), a session cookie set, 303 to /console/" },
  { id: 'oidc.logout', method: 'POST', path: '/api/v1/sys/oidc/logout', family: 'sys', access: 'read', auth: 'identity', level: 'instance', summary: "Ends the calling console session (its cookie with x-switchyard-console: 1); endSessionUrl names the provider's logout when admin.oidc.providerLogout is on" },
  { id: 'sys.steps', method: 'GET', path: '/api/v1/sys/steps', family: 'sys', access: 'read', auth: 'identity', level: 'instance', summary: 'The steps this node knows (built-ins and installed step packages, with their package and version) and their settings as JSON Schema' },

  { id: 'config.set', method: 'POST', path: '/api/v1/{tenant}/config/set/{kind}/{name}', family: 'config', access: 'write', auth: 'scope', level: 'tenant', body: true, summary: 'Write a draft entity; returns the receipt {logicalAddress, generation}' },
  { id: 'config.get', method: 'GET', path: '/api/v1/{tenant}/config/get/{kind}/{name}', family: 'config', access: 'read', auth: 'scope', level: 'tenant', summary: 'An entity: its draft and published versions side by side' },
  { id: 'config.list', method: 'GET', path: '/api/v1/{tenant}/config/list/{kind}', family: 'config', access: 'read', auth: 'scope', level: 'tenant', summary: 'The entities of a kind with their state' },
  { id: 'config.delete', method: 'POST', path: '/api/v1/{tenant}/config/delete/{kind}/{name}', family: 'config', access: 'write', auth: 'scope', level: 'tenant', summary: 'Stage the removal of an entity for the next publish' },
  { id: 'config.export', method: 'GET', path: '/api/v1/{tenant}/export', family: 'config', access: 'read', auth: 'scope', level: 'tenant', summary: "Every entity of the tenant as one state document {version, tenant, clusters, routes, orchs, certs} (?state=drafts|published; cert keys write-only)" },
  { id: 'config.diff', method: 'POST', path: '/api/v1/{tenant}/diff', family: 'config', access: 'read', auth: 'scope', level: 'tenant', body: true, summary: 'The plan of a state document {state, against?, prune?}: create, update (with field pointers), delete, unchanged per entity' },
  { id: 'config.sync', method: 'POST', path: '/api/v1/{tenant}/sync', family: 'config', access: 'write', auth: 'scope', level: 'tenant', body: true, summary: 'Apply a state document as drafts in one transaction {state, prune?, publish?, dryRun?}; publish also needs publish:write' },
  { id: 'config.explain', method: 'POST', path: '/api/v1/{tenant}/explain', family: 'config', access: 'read', auth: 'scope', level: 'tenant', body: true, summary: 'Which route a request {method, url, headers?, clientAddress?, draft?} would take and why, what each step would do, the target and upstream path; nothing is sent' },

  { id: 'publish.dry-run', method: 'POST', path: '/api/v1/{tenant}/publish/dry-run', family: 'publish', access: 'read', auth: 'scope', level: 'tenant', summary: 'Compile the drafts without side effects' },
  { id: 'publish.go', method: 'POST', path: '/api/v1/{tenant}/publish/go', family: 'publish', access: 'write', auth: 'scope', level: 'tenant', summary: 'Compile and publish the drafts as a new generation' },
  { id: 'publish.history', method: 'GET', path: '/api/v1/{tenant}/publish/history', family: 'publish', access: 'read', auth: 'scope', level: 'tenant', summary: "The tenant's generations, newest first" },
  { id: 'plugin.list', method: 'GET', path: '/api/v1/{tenant}/plugin/list', family: 'plugin', access: 'read', auth: 'scope', level: 'tenant', summary: 'Every built-in step: code, summary, enabled, settings JSON Schema' },
  { id: 'plugin.enable', method: 'POST', path: '/api/v1/{tenant}/plugin/enable/{code}', family: 'plugin', access: 'lifecycle', auth: 'scope', level: 'tenant', summary: 'Enable a step for the tenant (applies at the next publish)' },
  { id: 'plugin.disable', method: 'POST', path: '/api/v1/{tenant}/plugin/disable/{code}', family: 'plugin', access: 'lifecycle', auth: 'scope', level: 'tenant', summary: 'Disable a step for the tenant: routes using it fail the next dry-run and publish' },
  { id: 'key.issue', method: 'POST', path: '/api/v1/{tenant}/key/issue', family: 'key', access: 'write', auth: 'scope', level: 'tenant', body: true, summary: 'Issue a tenant sub-key {name, scopes, ttlSeconds?}; the plaintext is in this answer only' },
  { id: 'key.list', method: 'GET', path: '/api/v1/{tenant}/key/list', family: 'key', access: 'read', auth: 'scope', level: 'tenant', summary: "The tenant's sub-keys with state and lastUsedAt (never the plaintext)" },
  { id: 'key.revoke', method: 'POST', path: '/api/v1/{tenant}/key/revoke/{id}', family: 'key', access: 'write', auth: 'scope', level: 'tenant', summary: 'Revoke a sub-key: refused from the next request on' },
  { id: 'key.delete', method: 'POST', path: '/api/v1/{tenant}/key/delete/{id}', family: 'key', access: 'write', auth: 'scope', level: 'tenant', summary: "Delete a sub-key's record" },
  { id: 'audit.list', method: 'GET', path: '/api/v1/{tenant}/audit/list', family: 'audit', access: 'read', auth: 'scope', level: 'tenant', summary: "The tenant's admin writes, newest first (?limit=1..500, ?before=<id> for the next page)" },
  { id: 'clusters.health', method: 'GET', path: '/api/v1/{tenant}/clusters/{name}/health', family: 'cluster', access: 'read', auth: 'scope', level: 'tenant', summary: "A published cluster's targets with their health-check state, counters and last check; with DNS targets, each address found and each name's last resolution" },
  { id: 'metrics', method: 'GET', path: '/metrics', family: 'metrics', access: 'read', auth: 'scope', level: 'instance', summary: 'Prometheus text: generation, workers, admin authentication counters, and the data plane\'s series per route and target' },
  { id: 'publish.rollback', method: 'POST', path: '/api/v1/{tenant}/publish/rollback/{generation}', family: 'publish', access: 'write', auth: 'scope', level: 'tenant', summary: "Publish a new generation with the tenant's content of an earlier one" },
];

export function operationById(id: string): Operation {
  const op = OPERATIONS.find((o) => o.id === id);
  if (!op) throw new Error(`no operation ${id}`);
  return op;
}
