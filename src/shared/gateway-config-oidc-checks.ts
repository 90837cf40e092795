import { FAMILIES } from '../contracts/scopes.js';
import type { GatewayConfig } from './gateway-config-schema.js';
import type { ConfigError } from './gateway-config-checks.js';

/**
 * What `admin.oidc`'s schema cannot say alone: the client secret is in the environment
 * and is no other secret's variable, and every mapping grants something that exists.
 */
export function checkOidc(config: GatewayConfig, env: NodeJS.ProcessEnv, errors: ConfigError[]): void {
  const oidc = config.admin.oidc;
  if (oidc === undefined) return;
  const name = oidc.clientSecretEnv;
  if (!env[name]) errors.push({ path: 'admin.oidc.clientSecretEnv', message: `environment variable ${name} is not set` });
  if (config.admin.keys.some((k) => k.tokenEnv === name)) errors.push({ path: 'admin.oidc.clientSecretEnv', message: `${name} is an admin key's tokenEnv` });
  if (config.secrets.keyEnv === name) errors.push({ path: 'admin.oidc.clientSecretEnv', message: `${name} is secrets.keyEnv` });
  oidc.mappings.forEach((m, i) => {
    if (m.tenant === 'sys') errors.push({ path: `admin.oidc.mappings.${i}.tenant`, message: 'sys is the instance-level path segment, not a tenant' });
    m.scopes.forEach((scope, j) => {
      const family = scope.split(':')[0]!;
      if (scope !== '*' && !(FAMILIES as readonly string[]).includes(family)) {
        errors.push({ path: `admin.oidc.mappings.${i}.scopes.${j}`, message: `unknown scope family ${family}: one of ${FAMILIES.join(', ')}` });
      }
    });
  });
}
