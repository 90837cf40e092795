import type { UwsSupport } from './uws-support.js';

/** The data-plane engines (worker/engine/): uWebSockets.js (HTTP/1.1) and node:http/node:http2. */
export type EngineName = 'uws' | 'node';
export type EngineChoice = EngineName | 'auto';
export type TlsProtocol = 'h2' | 'http/1.1';

export interface ResolvedEngine {
  engine: EngineName;
  /** One clause for logs and `validate`: what chose it. */
  why: string;
}

/** Why `auto` must take node whatever uws can do: what the file asks for that only node serves. */
export const NODE_ONLY = {
  h2: 'HTTP/2 is asked for and uWebSockets.js speaks HTTP/1.1 only',
  clientCertificates: 'client certificates are asked for and uWebSockets.js does not show the peer certificate to JavaScript',
} as const;

/**
 * The engine `listen.engine` names. `auto` takes uws where its binary loads, unless the file
 * asks for what only node serves (`needsNode`, a NODE_ONLY reason: HTTP/2, client
 * certificates). Pure: the caller probes the runtime (uws-support.ts). An explicit `uws`
 * where it cannot load, or with such a feature, is refused by the config checks first.
 */
export function resolveEngine(choice: EngineChoice, support: UwsSupport, needsNode: string | null = null): ResolvedEngine {
  if (choice !== 'auto') return { engine: choice, why: `listen.engine: ${choice}` };
  if (!support.ok) return { engine: 'node', why: `auto: ${support.reason}` };
  if (needsNode !== null) return { engine: 'node', why: `auto: ${needsNode}` };
  return { engine: 'uws', why: 'auto: uWebSockets.js loads on this runtime' };
}

/** The ALPN list a TLS listener offers when worker.json names none. */
export function defaultTlsProtocols(engine: EngineName): TlsProtocol[] {
  return engine === 'node' ? ['h2', 'http/1.1'] : ['http/1.1'];
}

/** worker.json `listen`, as far as the engine choice reads it. */
export interface ListenEngineFields {
  host: string;
  port: number;
  engine: EngineChoice;
  h2c: boolean;
  tls?: { host?: string; port: number; protocols?: TlsProtocol[]; clientCertificates?: { mode: 'optional' | 'required' } };
}

/** What the data plane runs: the engine, why, and the protocols each listener speaks. */
export interface DataPlaneEngine extends ResolvedEngine {
  tlsProtocols: TlsProtocol[];
  h2c: boolean;
}

export function dataPlaneEngine(listen: ListenEngineFields, support: UwsSupport): DataPlaneEngine {
  const wantsH2 = listen.h2c || (listen.tls?.protocols?.includes('h2') ?? false);
  const needsNode = wantsH2 ? NODE_ONLY.h2 : listen.tls?.clientCertificates ? NODE_ONLY.clientCertificates : null;
  const resolved = resolveEngine(listen.engine, support, needsNode);
  return { ...resolved, tlsProtocols: listen.tls?.protocols ?? defaultTlsProtocols(resolved.engine), h2c: listen.h2c };
}

/** One line per listener, as `validate` prints them. */
export interface ListenerEngine {
  listener: string;
  engine: EngineName;
  why: string;
  /** What the listener speaks: ALPN order on TLS. */
  protocols: string[];
  line: string;
}

export function listenerEngines(listen: ListenEngineFields, chosen: DataPlaneEngine): ListenerEngine[] {
  const plain = ['http/1.1', ...(chosen.h2c ? ['h2c'] : [])];
  const out: ListenerEngine[] = [
    {
      listener: `data port ${listen.host}:${listen.port}`,
      engine: chosen.engine,
      why: chosen.why,
      protocols: plain,
      line: `data port ${listen.host}:${listen.port}: engine ${chosen.engine} (${chosen.why}), ${plain.join(', ')}`,
    },
  ];
  const tls = listen.tls;
  if (tls) {
    const at = `${tls.host ?? listen.host}:${tls.port}`;
    out.push({
      listener: `TLS port ${at}`,
      engine: chosen.engine,
      why: chosen.why,
      protocols: chosen.tlsProtocols,
      line: `TLS port ${at}: engine ${chosen.engine}, ALPN ${chosen.tlsProtocols.join(', ')}${tls.clientCertificates ? `, client certificates ${tls.clientCertificates.mode}` : ''}`,
    });
  }
  return out;
}
