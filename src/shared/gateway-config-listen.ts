import * as v from 'valibot';
import { isIP } from 'node:net';
import { Port } from './gateway-config-fields.js';
import type { UwsSupport } from './uws-support.js';

const Address = v.pipe(v.string(), v.check((s) => isIP(s) !== 0, 'must be an IP address'));

/** ALPN protocols in the order the listener prefers them; the default depends on the engine (engine-choice.ts). */
const TlsProtocols = v.pipe(
  v.array(v.picklist(['h2', 'http/1.1'])),
  v.minLength(1, 'must name at least one protocol'),
  v.check((list) => new Set(list).size === list.length, 'must not name a protocol twice'),
);

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
    }),
  ),
});

/** What the schema cannot say of `listen.engine`: HTTP/2 needs node, and `uws` needs its binary here. */
export function checkListenEngine(listen: ListenConfig, support: () => UwsSupport, errors: { path: string; message: string }[]): void {
  if (listen.engine !== 'uws') return;
  if (listen.h2c) errors.push({ path: 'listen.h2c', message: 'the uws engine speaks HTTP/1.1 only' });
  if (listen.tls?.protocols?.includes('h2')) errors.push({ path: 'listen.tls.protocols', message: 'the uws engine speaks HTTP/1.1 only: h2 needs listen.engine "node" or "auto"' });
  const probed = support();
  if (!probed.ok) errors.push({ path: 'listen.engine', message: `uws cannot run here: ${probed.reason}; use "node" or "auto"` });
}

export type ListenConfig = v.InferOutput<typeof ListenSchema>;
