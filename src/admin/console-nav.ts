import { OPERATIONS, type Operation } from './contract.js';
import type { Identity } from './identity.js';
import { accessDenial } from './authorize.js';

/**
 * What the console shows an identity, derived from the contract table alone: the
 * console renders this answer and holds no permission logic of its own.
 *
 * A view is listed when the identity may call its read operation; a feature is
 * `enabled` when it may call the feature's operation, `disabled` when it may read the
 * view but not act, and `hidden` when it cannot reach the view at all (wrong level,
 * another tenant, no read scope).
 */
export type FeatureState = 'enabled' | 'disabled' | 'hidden';

interface ViewDef {
  id: string;
  label: string;
  /** The operation that must be callable for the view to be listed. */
  read: string;
}

interface FeatureDef {
  id: string;
  /** The operation the control calls. */
  op: string;
  /** The view the control lives in. */
  view: string;
}

export const CONSOLE_VIEWS: readonly ViewDef[] = [
  { id: 'overview', label: 'Overview', read: 'cluster.status' },
  { id: 'clusters', label: 'Clusters', read: 'config.list' },
  { id: 'routes', label: 'Routes', read: 'config.list' },
  { id: 'chains', label: 'Chains', read: 'config.list' },
  { id: 'certificates', label: 'Certificates', read: 'config.list' },
  { id: 'explain', label: 'Explain', read: 'config.explain' },
  { id: 'publish', label: 'Publish', read: 'publish.history' },
  { id: 'keys', label: 'Keys', read: 'key.list' },
  { id: 'plugins', label: 'Plugins', read: 'plugin.list' },
  { id: 'audit', label: 'Audit', read: 'audit.list' },
];

export const CONSOLE_FEATURES: readonly FeatureDef[] = [
  { id: 'config.set', op: 'config.set', view: 'routes' },
  { id: 'config.delete', op: 'config.delete', view: 'routes' },
  { id: 'publish.dry-run', op: 'publish.dry-run', view: 'publish' },
  { id: 'publish.go', op: 'publish.go', view: 'publish' },
  { id: 'publish.rollback', op: 'publish.rollback', view: 'publish' },
  { id: 'key.issue', op: 'key.issue', view: 'keys' },
  { id: 'key.revoke', op: 'key.revoke', view: 'keys' },
  { id: 'key.delete', op: 'key.delete', view: 'keys' },
  { id: 'plugin.toggle', op: 'plugin.enable', view: 'plugins' },
  // Reads a view makes beside its own: without them the view shows less, never a 403.
  { id: 'overview.history', op: 'publish.history', view: 'overview' },
  { id: 'designer.palette', op: 'plugin.list', view: 'chains' },
  { id: 'cluster.health', op: 'clusters.health', view: 'clusters' },
  { id: 'publish.diff', op: 'config.diff', view: 'publish' },
];

const byId = new Map(OPERATIONS.map((o) => [o.id, o]));

/** Whether the auth gate would let `identity` call `op` on `tenant`. */
export function mayCall(identity: Identity, op: Operation, tenant: string): boolean {
  return op.auth === 'none' || accessDenial(op, op.level === 'tenant' ? tenant : undefined, identity) === null;
}

export interface ConsoleModel {
  tenant: string;
  /** False for a tenant-bound identity: the tenant is fixed. */
  tenantSelectable: boolean;
  nav: { id: string; label: string }[];
  features: Record<string, FeatureState>;
}

export function consoleModel(identity: Identity, requestedTenant: string | null): ConsoleModel {
  const tenant = identity.tenant ?? requestedTenant ?? 'default';
  const op = (id: string) => byId.get(id)!;
  const visible = new Set(CONSOLE_VIEWS.filter((v) => mayCall(identity, op(v.read), tenant)).map((v) => v.id));
  const features: Record<string, FeatureState> = {};
  for (const f of CONSOLE_FEATURES) {
    features[f.id] = !visible.has(f.view) ? 'hidden' : mayCall(identity, op(f.op), tenant) ? 'enabled' : 'disabled';
  }
  return {
    tenant,
    tenantSelectable: identity.tenant === null,
    nav: CONSOLE_VIEWS.filter((v) => visible.has(v.id)).map(({ id, label }) => ({ id, label })),
    features,
  };
}
