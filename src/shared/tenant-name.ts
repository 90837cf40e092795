/** Tenant names: lower-case DNS-label-like, and never `sys` (the instance-level path segment). */
export const TENANT_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;

export function isTenantName(s: string): boolean {
  return TENANT_PATTERN.test(s) && s !== 'sys';
}
