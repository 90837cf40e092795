import { isIP } from 'node:net';
import { FAMILIES } from '../contracts/scopes.js';
import type { GatewayConfig } from './gateway-config-schema.js';
import type { ConfigError } from './gateway-config-checks.js';

/**
 * What `admin.oidc`'s schema cannot say alone: the client secret is in the environment
 * and is no other secret's variable, and every mapping grants something that exists.
 */
export function checkOidc(config: GatewayConfig, env: NodeJS.ProcessEnv, errors: ConfigError[], warnings: string[]): void {
  const oidc = config.admin.oidc;
  if (oidc === undefined) return;
  const shared = dataPortAnswersOn(config, oidc.publicUrl);
  if (shared !== null) {
    warnings.push(`admin.oidc.publicUrl: the data port also answers on ${shared}, and browsers send the console's cookies to every port of a host; give the admin port its own host name`);
  }
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

/** publicUrl's host when it is an IP literal the data port (or its TLS listener) also listens on, else null. */
function dataPortAnswersOn(config: GatewayConfig, publicUrl: string): string | null {
  if (!URL.canParse(publicUrl)) return null;
  const host = new URL(publicUrl).hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(host) === 0) return null;
  const hosts = [config.listen.host, config.listen.tls?.host ?? config.listen.host];
  return hosts.some((h) => h === '0.0.0.0' || h === '::' || h === host) ? host : null;
}
