import { buildConnector, errors } from 'undici';
import type { Socket } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import type { CompiledTls } from '../contracts/generation.js';
import { certKeyContext, openStored, processSecretBox } from './secret-box.js';

/**
 * TLS to a cluster's https:// targets: the options Node's TLS gets from a cluster's `tls`
 * block, and a connector that tells a failed handshake (502 Svc.Data.UpstreamTls) apart
 * from a connection that was never made. undici's own connector reports both alike.
 */

/** The code of the error a failed TLS handshake fails with (502 Svc.Data.UpstreamTls). */
export const UPSTREAM_TLS = 'SY_UPSTREAM_TLS';

/** The TCP connection was made, the TLS handshake was not: nothing was sent. `reason`: Node's code. */
export class UpstreamTlsError extends Error {
  override readonly name = 'UpstreamTlsError';
  readonly code = UPSTREAM_TLS;
  constructor(
    readonly target: string,
    readonly reason: string,
    detail: string,
  ) {
    super(`TLS to upstream ${target} failed: ${reason}: ${detail}`);
  }
}

/**
 * Node's TLS options for `tls`, the client certificate read from the environment now (by
 * the worker or the supervisor, which share it). `missing`: the variables named but unset;
 * the connection then goes without a client certificate.
 */
export function tlsOptions(tls: CompiledTls | undefined, env: NodeJS.ProcessEnv = process.env): { options: ConnectionOptions; missing: string[] } {
  if (!tls) return { options: {}, missing: [] };
  const options: ConnectionOptions = { rejectUnauthorized: tls.verify };
  if (tls.serverName !== undefined) options.servername = tls.serverName;
  if (tls.ca !== undefined) options.ca = tls.ca;
  const missing: string[] = [];
  const cc = tls.clientCertificate;
  if (cc && 'cert' in cc) {
    try {
      Object.assign(options, { cert: cc.certificate, key: openStored(cc.privateKey, certKeyContext(cc.cert), processSecretBox()) });
    } catch {
      missing.push(`the private key of cert ${cc.cert} (sealed: secrets.keyEnv)`);
    }
  } else if (cc) {
    const cert = env[cc.certificateEnv];
    const key = env[cc.privateKeyEnv];
    if (!cert) missing.push(cc.certificateEnv);
    if (!key) missing.push(cc.privateKeyEnv);
    if (cert && key) Object.assign(options, { cert, key });
  }
  return { options, missing };
}

/** OpenSSL and Node TLS codes on an established connection (an alert after the handshake: a refused client certificate). */
export function tlsErrorCode(code: string | undefined): boolean {
  return code !== undefined && (code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_'));
}

type Connect = NonNullable<import('undici').Client.Options['connect']>;

/**
 * undici's connector for `options`, its errors sorted: one after the TCP connection was
 * made and before the handshake completed (an unverified certificate, a wrong name, an
 * alert, a reset) becomes an UpstreamTlsError; a connect timeout stays one (504), as do
 * refusals and unreachable hosts. `connect` already a function: the upstream policy
 * refused the target outright; nothing to wrap.
 */
export function secureConnector(connect: Connect, target: string, onFailure?: (err: UpstreamTlsError) => void): Connect {
  if (typeof connect === 'function') return connect;
  const base = buildConnector(connect as buildConnector.BuildOptions);
  // The name sent and verified is the cluster's serverName, else the target's host: never
  // the one undici takes from each request's Host header, which a client chooses.
  const servername = (connect as ConnectionOptions).servername;
  return (opts, callback) => {
    let tcpUp = false;
    let secured = false;
    const socket = base({ ...opts, servername }, (err, sock) => {
      if (err === null) {
        secured = true;
        return callback(null, sock);
      }
      if (!tcpUp || err instanceof errors.ConnectTimeoutError) return callback(err, null);
      const failed = new UpstreamTlsError(target, (err as NodeJS.ErrnoException).code ?? 'handshake', err.message);
      onFailure?.(failed);
      callback(failed, null);
    }) as unknown as Socket | undefined;
    socket?.once('connect', () => (tcpUp = true));
    socket?.on('error', (err: NodeJS.ErrnoException) => {
      if (secured && tlsErrorCode(err.code)) onFailure?.(new UpstreamTlsError(target, err.code!, err.message));
    });
  };
}
