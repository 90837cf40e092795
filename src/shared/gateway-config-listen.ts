import * as v from 'valibot';
import { isIP } from 'node:net';
import { Port } from './gateway-config-fields.js';
import type { UwsSupport } from './uws-support.js';
import { readClientCa } from './client-ca.js';
import type { DataPlaneSettings } from '../contracts/ipc.js';

const Address = v.pipe(v.string(), v.check((s) => isIP(s) !== 0, 'must be an IP address'));

/** ALPN protocols in the order the listener prefers them; the default depends on the engine (engine-choice.ts). */
const TlsProtocols = v.pipe(
  v.array(v.picklist(['h2', 'http/1.1'])),
  v.minLength(1, 'must name at least one protocol'),
  v.check((list) => new Set(list).size === list.length, 'must not name a protocol twice'),
);

/**
 * Client certificates on the TLS listener. `ca`: PEM text, or the path of a PEM file
 * (relative to worker.json's folder), read at load (client-ca.ts): after loading it holds the
 * PEM text. `required` refuses a handshake without a certificate the CAs verify; `optional`
 * asks for one and lets the routes' client-cert steps decide.
 */
const ClientCertificates = v.strictObject({
  ca: v.pipe(
    v.string('must be PEM text or the path of a PEM file (cert entities cannot be CAs: docs/configuration.md)'),
    v.minLength(1, 'must be PEM text or the path of a PEM file'),
  ),
  mode: v.optional(v.picklist(['optional', 'required'], 'must be "optional" or "required"'), 'required'),
});

/** worker.json `listen`: the data port, its optional TLS listener, and the engine serving both. */
export const ListenSchema = v.strictObject({
  port: Port,
  host: v.optional(Address, '0.0.0.0'),
  /** `uws`: uWebSockets.js (HTTP/1.1); `node`: node:http and node:http2; `auto`: uws where its binary loads. */
  engine: v.optional(v.picklist(['auto', 'uws', 'node']), 'auto'),
  /** Cleartext HTTP/2 with prior knowledge on the plain port, beside HTTP/1.1 (node engine). */
  h2c: v.optional(v.boolean(), false),
  /** A TLS listener beside the plain one, serving the published `cert` entities by SNI. */
  tls: v.optional(
    v.strictObject({
      port: Port,
      host: v.optional(Address),
      protocols: v.optional(TlsProtocols),
      clientCertificates: v.optional(ClientCertificates),
    }),
  ),
});

/** What the schema cannot say of `listen.engine`: HTTP/2 and client certificates need node, and `uws` needs its binary here. */
export function checkListenEngine(listen: ListenConfig, support: () => UwsSupport, errors: { path: string; message: string }[]): void {
  if (listen.engine !== 'uws') return;
  if (listen.h2c) errors.push({ path: 'listen.h2c', message: 'the uws engine speaks HTTP/1.1 only' });
  if (listen.tls?.protocols?.includes('h2')) errors.push({ path: 'listen.tls.protocols', message: 'the uws engine speaks HTTP/1.1 only: h2 needs listen.engine "node" or "auto"' });
  if (listen.tls?.clientCertificates) {
    errors.push({ path: 'listen.tls.clientCertificates', message: 'the uws engine does not show the client certificate to the gateway: client certificates need listen.engine "node" or "auto"' });
  }
  const probed = support();
  if (!probed.ok) errors.push({ path: 'listen.engine', message: `uws cannot run here: ${probed.reason}; use "node" or "auto"` });
}

/**
 * Reads `listen.tls.clientCertificates.ca` (PEM text or a file) into the config as PEM text,
 * once at load; a CA that cannot be used is an error at its path (validate, bootstrap exit 10).
 */
export function loadClientCa(listen: ListenConfig, baseDir: string, errors: { path: string; message: string }[], warnings: string[]): void {
  const cc = listen.tls?.clientCertificates;
  if (!cc) return;
  const read = readClientCa(cc.ca, baseDir);
  if (!read.ok) return void errors.push({ path: 'listen.tls.clientCertificates.ca', message: read.message });
  cc.ca = read.pem;
  warnings.push(...read.warnings);
}

/** What the workers are told of `listen.tls` (loaded: its CA as PEM text), host filled in. */
export function tlsListenerSettings(listen: ListenConfig): DataPlaneSettings['tls'] {
  const tls = listen.tls;
  if (!tls) return undefined;
  const cc = tls.clientCertificates;
  return { host: tls.host ?? listen.host, port: tls.port, ...(cc ? { clientCertificates: { ca: cc.ca, mode: cc.mode } } : {}) };
}

export type ListenConfig = v.InferOutput<typeof ListenSchema>;
