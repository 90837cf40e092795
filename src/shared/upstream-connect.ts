import type { Client } from 'undici';
import type { CompiledTls } from '../contracts/generation.js';
import type { UpstreamGuard } from './upstream-guard.js';
import { targetParts } from './target-url.js';
import { secureConnector, tlsOptions, type UpstreamTlsError } from './upstream-tls.js';
import { urlHostPort } from './host-port.js';

/**
 * How one process connects to one cluster target, plain or TLS: the origin undici gets,
 * its `connect` (the tenant's upstream policy, `guard`, and for https the cluster's TLS settings),
 * and the fixed `servername` each request on an https target carries. The workers' pools
 * and the supervisor's health probes build theirs here, so both connect alike.
 */
export interface TargetConnection {
  origin: string;
  connect: NonNullable<Client.Options['connect']>;
  /**
   * https only: every request's servername. undici reconnects whenever a request's
   * servername differs from its connection's, and takes it from the Host header otherwise.
   */
  servername?: string;
  /** Client certificate variables named by the cluster but unset in this process. */
  missingEnv: string[];
}

export function targetConnection(
  guard: UpstreamGuard,
  tenant: string,
  target: string,
  spec: { connectMs: number; tls?: CompiledTls; protocol?: 'h2' | 'h2c' },
  onTlsFailure?: (err: UpstreamTlsError) => void,
): TargetConnection {
  const { secure, hostPort, origin } = targetParts(target);
  const base = { timeout: spec.connectMs };
  if (!secure) return { origin, connect: guard.connect(tenant, hostPort, base), missingEnv: [] };
  const { options, missing } = tlsOptions(spec.tls);
  // An h2 cluster's handshake offers ALPN h2 (undici's connector then offers http/1.1 and h2; upstream-h2-session.ts refuses any but h2).
  const alpn = spec.protocol === 'h2' ? { allowH2: true } : {};
  const connect = secureConnector(guard.connect(tenant, hostPort, { ...base, ...options, ...alpn }), target, onTlsFailure);
  return { origin, connect, servername: options.servername ?? urlHostPort(hostPort).host, missingEnv: missing };
}
