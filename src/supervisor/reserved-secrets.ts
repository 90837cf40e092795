import type { GatewayConfig } from '../shared/gateway-config-schema.js';

/**
 * The environment variables no tenant step may name, whatever secrets.env allows: the admin
 * keys' tokens, the sealing key, the console's OpenID client secret, the store's and Redis's passwords.
 */
export function reservedSecretEnv(config: GatewayConfig): string[] {
  return [
    ...config.admin.keys.flatMap((k) => (k.tokenEnv === undefined ? [] : [k.tokenEnv])),
    ...(config.secrets.keyEnv === undefined ? [] : [config.secrets.keyEnv]),
    ...(config.admin.oidc ? [config.admin.oidc.clientSecretEnv] : []),
    ...['PGPASSWORD', 'PGPASSFILE'],
    ...(config.redis?.passwordEnv === undefined ? [] : [config.redis.passwordEnv]),
  ];
}
