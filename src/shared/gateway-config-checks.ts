import { createHash } from 'node:crypto';
import { FAMILIES } from '../contracts/scopes.js';
import { ANY_SECRET, WILDCARD_TENANT } from '../contracts/secrets.js';
import type { GatewayConfig } from './gateway-config-schema.js';
import { addressesOverlap, isLoopback, parseHostPort } from './host-port.js';
import { parseSealingKey } from './secret-box.js';
import { checkListenEngine } from './gateway-config-listen.js';
import { uwsSupport, type UwsSupport } from './uws-support.js';
import { checkOidc } from './gateway-config-oidc-checks.js';

export interface ConfigError {
  path: string;
  message: string;
}

/**
 * What worker.json's schema cannot say alone: checks across fields and against the
 * environment. `support` is asked only when the file names the uws engine.
 */
export function checkGatewayConfig(config: GatewayConfig, env: NodeJS.ProcessEnv, errors: ConfigError[], warnings: string[], support: () => UwsSupport = uwsSupport): void {
  checkListenEngine(config.listen, support, errors);
  checkAdminKeys(config, env, errors, warnings);
  checkAdminAddress(config, warnings);
  checkOidc(config, env, errors, warnings);
  // A block of prefix 0 trusts every peer: any client could then name its own address.
  for (const block of config.trustedProxies) {
    if (/\/0+$/.test(block)) warnings.push(`trustedProxies: ${block} trusts every peer, so any client can name its own address; list the proxies' own addresses`);
  }
  checkSecrets(config, errors, warnings);
  checkSealing(config, env, errors, warnings);
  // The data port and the admin port on one port of overlapping addresses: `run` could
  // bind only one of them (exit 11); it is the file that is wrong.
  const admin = parseHostPort(config.admin.listen);
  if (admin && admin.port === config.listen.port && addressesOverlap(admin.host, config.listen.host)) {
    errors.push({ path: 'admin.listen', message: `the admin port ${config.admin.listen} is the data port (${config.listen.host}:${config.listen.port})` });
  }
  const tls = config.listen.tls;
  if (tls) {
    const tlsHost = tls.host ?? config.listen.host;
    if (tls.port === config.listen.port && addressesOverlap(tlsHost, config.listen.host)) {
      errors.push({ path: 'listen.tls.port', message: `the TLS port ${tls.port} is the plain data port` });
    }
    if (admin && admin.port === tls.port && addressesOverlap(admin.host, tlsHost)) {
      errors.push({ path: 'admin.listen', message: `the admin port ${config.admin.listen} is the TLS data port (${tlsHost}:${tls.port})` });
    }
  }
}

/** secrets.keyEnv must hold a usable key; without one, certificates' private keys are stored as sent. */
function checkSealing(config: GatewayConfig, env: NodeJS.ProcessEnv, errors: ConfigError[], warnings: string[]): void {
  const name = config.secrets.keyEnv;
  if (name === undefined) {
    if (config.listen.tls) warnings.push('listen.tls is set and secrets.keyEnv is not: cert private keys are stored unencrypted in the volume');
    return;
  }
  if (!env[name]) errors.push({ path: 'secrets.keyEnv', message: `environment variable ${name} is not set` });
  else if (parseSealingKey(env[name]) === null) errors.push({ path: 'secrets.keyEnv', message: `${name} must hold 32 bytes: 64 hex digits or base64` });
  if (config.admin.keys.some((k) => k.tokenEnv === name)) errors.push({ path: 'secrets.keyEnv', message: `${name} is an admin key's tokenEnv` });
}

function checkAdminKeys(config: GatewayConfig, env: NodeJS.ProcessEnv, errors: ConfigError[], warnings: string[]): void {
  const ids = new Set<string>();
  const byToken = new Map<string, string>(); // token fingerprint -> the first key's id
  config.admin.keys.forEach((k, i) => {
    if (ids.has(k.id)) errors.push({ path: `admin.keys.${i}.id`, message: `duplicate key id ${k.id}` });
    // `sys` matches the tenant pattern but is the instance-level path segment: such a key could call nothing.
    if (k.tenant === 'sys') errors.push({ path: `admin.keys.${i}.tenant`, message: 'sys is the instance-level path segment, not a tenant' });
    // Two keys with one token: the first would silently win, with its scopes.
    const plain = k.token ?? (k.tokenEnv !== undefined ? env[k.tokenEnv] : undefined);
    const fp = plain ? createHash('sha256').update(plain).digest('hex') : k.tokenSha256;
    if (fp !== undefined) {
      const first = byToken.get(fp);
      if (first !== undefined) errors.push({ path: `admin.keys.${i}`, message: `same token as admin key ${first}` });
      else byToken.set(fp, k.id);
    }
    // As `key issue` does: a scope of an unknown family would grant nothing, silently.
    k.scopes.forEach((scope, j) => {
      const family = scope.split(':')[0]!;
      if (scope !== '*' && !(FAMILIES as readonly string[]).includes(family)) {
        errors.push({ path: `admin.keys.${i}.scopes.${j}`, message: `unknown scope family ${family}: one of ${FAMILIES.join(', ')}` });
      }
    });
    ids.add(k.id);
    if (k.tokenEnv !== undefined) {
      const value = env[k.tokenEnv];
      if (!value) errors.push({ path: `admin.keys.${i}.tokenEnv`, message: `environment variable ${k.tokenEnv} is not set` });
      else if (value.length < 32) warnings.push(`admin key ${k.id}: the token in ${k.tokenEnv} is shorter than 32 characters`);
    }
    if (k.token !== undefined) {
      warnings.push(`admin key ${k.id}: plaintext token in the file; prefer tokenSha256 or tokenEnv`);
      if (k.token.length < 32) warnings.push(`admin key ${k.id}: token is shorter than 32 characters`);
    }
  });
  if (config.admin.keys.length === 0 && config.admin.oidc === undefined) warnings.push('no admin keys: every admin call but /healthz and /readyz will be refused');
}

function checkAdminAddress(config: GatewayConfig, warnings: string[]): void {
  const admin = parseHostPort(config.admin.listen);
  if (admin && (admin.host === '0.0.0.0' || admin.host === '::')) {
    warnings.push('the admin port listens on every interface; bind it to a private address');
  } else if (admin && !isLoopback(admin.host)) {
    warnings.push(`the admin port listens on ${admin.host}, which is not a loopback address; make sure only operators can reach it`);
  }
}

/** `*` reaches every variable of the gateway: only the operator's own tenant may have it. */
function checkSecrets(config: GatewayConfig, errors: ConfigError[], warnings: string[]): void {
  const tokenEnvs = new Set(config.admin.keys.flatMap((k) => (k.tokenEnv === undefined ? [] : [k.tokenEnv])));
  for (const [tenant, names] of Object.entries(config.secrets.env)) {
    names.forEach((name, j) => {
      if (name === ANY_SECRET && tenant !== WILDCARD_TENANT) errors.push({ path: `secrets.env.${tenant}.${j}`, message: `* is for the ${WILDCARD_TENANT} tenant only; list the variables ${tenant} may name` });
      if (name === config.admin.oidc?.clientSecretEnv) warnings.push(`secrets.env.${tenant}: ${name} is admin.oidc.clientSecretEnv; no tenant may name it, listed or not`);
      if (tokenEnvs.has(name)) warnings.push(`secrets.env.${tenant}: ${name} is an admin key's tokenEnv; no tenant may name it, listed or not`);
    });
  }
}
