import type { OpHandler } from '../op-context.js';
import type { Services } from '../services.js';
import * as sys from './sys.js';
import * as config from './config.js';
import * as publish from './publish.js';
import * as plugin from './plugin.js';
import * as key from './key.js';
import * as audit from './audit.js';
import * as clusters from './clusters.js';
import * as state from './state.js';
import * as explain from './explain.js';
import * as workers from './workers.js';
import * as oidc from './oidc.js';

/** Operation id (contract.ts) -> handler. The admin server refuses to start if one is missing. */
export const HANDLERS: Record<string, OpHandler<Services>> = {
  health: sys.health,
  ready: sys.ready,
  openapi: sys.openapi,
  whoami: sys.whoami,
  'cluster.status': sys.clusterStatus,
  'sys.steps': sys.steps,
  'oidc.status': oidc.status,
  'oidc.login': oidc.login,
  'oidc.callback': oidc.callback,
  'oidc.logout': oidc.logout,
  'workers.restart': workers.restart,
  'workers.restart.status': workers.restartStatus,
  console: sys.consoleNav,
  'config.set': config.set,
  'config.get': config.get,
  'config.list': config.list,
  'config.delete': config.remove,
  'config.export': state.exportState,
  'config.diff': state.diff,
  'config.sync': state.sync,
  'config.explain': explain.explain,
  'publish.dry-run': publish.dryRun,
  'publish.go': publish.go,
  'publish.history': publish.history,
  'publish.rollback': publish.rollback,
  'plugin.list': plugin.list,
  'plugin.enable': plugin.enable,
  'plugin.disable': plugin.disable,
  'key.issue': key.issue,
  'key.list': key.list,
  'key.revoke': key.revoke,
  'key.delete': key.remove,
  'audit.list': audit.list,
  'clusters.health': clusters.health,
  metrics: sys.metrics,
};
