import * as v from 'valibot';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { networkInterfaces } from 'node:os';
import type { UpstreamRules } from './upstream-policy.js';
import { GatewayConfigSchema, type GatewayConfig } from './gateway-config-schema.js';
import { checkGatewayConfig, type ConfigError } from './gateway-config-checks.js';
import { parseHostPort } from './host-port.js';
import { loadClientCa } from './gateway-config-listen.js';
import { uwsSupport, type UwsSupport } from './uws-support.js';

export type { ConfigError };

export interface LoadedConfig {
  ok: boolean;
  config?: GatewayConfig;
  /** Folder of the config file: virtual:// paths are relative to it. */
  baseDir: string;
  errors: ConfigError[];
  warnings: string[];
}

/** Reads, parses and checks the gateway's config file (worker.json); never throws. `support`: whether uWS loads here (tests pass their own). */
export function loadGatewayConfig(file: string, env: NodeJS.ProcessEnv = process.env, support: () => UwsSupport = uwsSupport): LoadedConfig {
  const baseDir = dirname(resolve(file));
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    const message = (err as NodeJS.ErrnoException).code ? `cannot read file: ${(err as Error).message}` : `not valid JSON: ${(err as Error).message}`;
    return { ok: false, baseDir, errors: [{ path: '', message }], warnings: [] };
  }
  const parsed = v.safeParse(GatewayConfigSchema, raw);
  if (!parsed.success) {
    const errors = parsed.issues.map((i) => ({
      path: issuePath(i),
      message: i.expected === 'never' ? 'unknown field' : i.message,
    }));
    return { ok: false, baseDir, errors, warnings: [] };
  }
  const config = parsed.output;
  const errors: ConfigError[] = [];
  const warnings: string[] = [];
  checkGatewayConfig(config, env, errors, warnings, support);
  loadClientCa(config.listen, baseDir, errors, warnings);
  if (errors.length) return { ok: false, baseDir, errors, warnings };
  return { ok: true, config, baseDir, errors, warnings };
}

/** The upstream policy's input: worker.json's `upstreams` and the gateway's own ports. */
export function upstreamRules(config: GatewayConfig): UpstreamRules {
  const admin = parseHostPort(config.admin.listen)!;
  const local = Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((a) => a.address.split('%')[0]!));
  const tls = config.listen.tls;
  return {
    ...config.upstreams,
    admin,
    data: { host: config.listen.host, port: config.listen.port },
    ...(tls ? { dataTls: { host: tls.host ?? config.listen.host, port: tls.port } } : {}),
    local,
  };
}

function issuePath(issue: v.BaseIssue<unknown>): string {
  return (issue.path ?? []).map((p) => String((p as { key: unknown }).key)).join('.');
}
