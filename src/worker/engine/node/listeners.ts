import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { createSecureServer, createServer as createH2Server, type Http2SecureServer, type Http2Server } from 'node:http2';
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import type { Logger } from '../../../shared/logger.js';
import type { EngineLimits, TlsProtocol } from '../contract.js';
import { h2Options } from './h2-sessions.js';
import type { SniContexts } from './sni-contexts.js';

/** Servers that parse HTTP/1.1 (the TLS ones too, with allowHTTP1). */
export type H1Server = HttpServer | HttpsServer | Http2SecureServer;
export type TlsServer = HttpsServer | Http2SecureServer;

/**
 * Each worker binds a socket of its own with SO_REUSEPORT where node offers it (22.12, 23.1
 * and later), as uWS does: the kernel spreads connections. On older runtimes node:cluster
 * shares the supervisor's socket and each worker accepts from it (SCHED_NONE, worker-pool.ts).
 */
const OWN_SOCKET = ((major, minor) => major > 23 || (major === 23 && minor >= 1) || (major === 22 && minor >= 12))(...(process.versions.node.split('.').map(Number) as [number, number]));

/** The client preface of HTTP/2 with prior knowledge (RFC 9113 §3.4). */
const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/** node's HTTP/1.1 timers and bounds from worker.json `limits`. */
export function configureH1(server: H1Server, limits: EngineLimits): void {
  const s = server as H1Server & { maxHeaderSize?: number; connectionsCheckingInterval?: number; headersTimeout: number; requestTimeout: number; keepAliveTimeout: number };
  s.keepAliveTimeout = limits.idleTimeoutS * 1000;
  // Heads after the first (the first one's deadline is the engine's own, connections.ts).
  s.headersTimeout = limits.headerTimeoutMs;
  // Bodies are timed by the request owner (limits.bodyTimeoutMs), never cut by node as a whole.
  s.requestTimeout = 0;
  s.maxHeaderSize = limits.maxHeadBytes;
  // node drops the fields past maxHeadersCount silently (steps and upstream would not see them): no count, the head's size is the bound.
  (s as { maxHeadersCount: number | null }).maxHeadersCount = 0;
  s.connectionsCheckingInterval = Math.min(1_000, limits.headerTimeoutMs);
}

/** The cleartext servers node parses with; the engine's own TCP listener hands them the sockets. */
export function cleartextServers(limits: EngineLimits, h2c: boolean): { h1: HttpServer; h2: Http2Server | null } {
  const h1 = createHttpServer({ maxHeaderSize: limits.maxHeadBytes, connectionsCheckingInterval: Math.min(1_000, limits.headerTimeoutMs) });
  configureH1(h1, limits);
  // node starts checking its connections' timers when a server listens; this one never does itself.
  h1.emit('listening');
  return { h1, h2: h2c ? createH2Server(h2Options(limits)) : null };
}

/**
 * The TCP listener in front of the cleartext servers: a connection `admit` lets in goes to
 * the HTTP/1.1 server, or with h2c to the h2 one when its first bytes are the preface.
 */
/**
 * The TLS port's listener: a connection reaches the TLS server only once admitted, so one
 * refused (over the cap, or from an address in its rapid-reset cooldown) costs an accept and a
 * close, never the TLSSocket and SSL state node's TLS server would set up for it first.
 */
export function tlsListener(tls: TlsServer, admit: (socket: Socket) => boolean): NetServer {
  return createNetServer({ noDelay: true }, (socket) => {
    if (admit(socket)) tls.emit('connection', socket);
  });
}

export function tcpListener(h1: HttpServer, h2: Http2Server | null, admit: (socket: Socket) => boolean): NetServer {
  return createNetServer({ noDelay: true }, (socket) => {
    if (!admit(socket)) return;
    if (!h2) return void h1.emit('connection', socket);
    sniffPreface(socket, (isH2) => {
      if (isH2) return void h2.emit('connection', socket);
      h1.emit('connection', socket);
      socket.resume(); // node's parser reads the unshifted bytes from the flowing socket
    });
  });
}

/**
 * Reads a connection's first bytes until they are, or cannot be, the h2 preface, then
 * puts them back and says which it was. The bytes are unshifted, so node's HTTP/1.1 parser
 * reads them from the socket's buffer and its h2 session from `readableLength`.
 */
function sniffPreface(socket: Socket, done: (h2: boolean) => void): void {
  let got: Buffer | null = null;
  const onData = (chunk: Buffer): void => {
    got = got === null ? chunk : Buffer.concat([got, chunk]);
    const n = Math.min(got.length, PREFACE.length);
    const same = got.subarray(0, n).equals(PREFACE.subarray(0, n));
    if (same && n < PREFACE.length) return;
    socket.off('data', onData);
    socket.pause();
    socket.unshift(got);
    done(same);
  };
  socket.on('data', onData);
}

/**
 * A TLS listener: h2 and HTTP/1.1 by ALPN when h2 is offered, else HTTPS alone. Certificates
 * come from `sni`, and with `clientCertificates` the client's is asked for (its CAs are in
 * every context of `sni`): `required` refuses a handshake without one that verifies.
 */
export function tlsServer(protocols: TlsProtocol[], sni: SniContexts, limits: EngineLimits, clientCertificates?: 'optional' | 'required'): TlsServer {
  const clients = clientCertificates ? { requestCert: true, rejectUnauthorized: clientCertificates === 'required' } : {};
  const base = { SNICallback: sni.select, handshakeTimeout: limits.headerTimeoutMs, ...clients, ...sni.bareOptions };
  // node's h2 server fixes its ALPN list itself (h2, then http/1.1 with allowHTTP1).
  const server: TlsServer = protocols.includes('h2')
    ? createSecureServer({ ...base, ...h2Options(limits), allowHTTP1: protocols.includes('http/1.1') })
    : createHttpsServer({ ...base, ALPNProtocols: ['http/1.1'], maxHeaderSize: limits.maxHeadBytes });
  configureH1(server, limits);
  return server;
}

/** Binds a listener (its own socket where the runtime has SO_REUSEPORT); resolves false when the address cannot be bound. */
export function bindListener(server: NetServer, host: string, port: number, log: Logger): Promise<boolean> {
  return new Promise((resolve) => {
    const failed = (err: Error): void => {
      log.error({ host, port, err: err.message }, 'data port: cannot listen');
      resolve(false);
    };
    server.once('error', failed);
    server.listen({ port, host, ...(OWN_SOCKET ? { reusePort: true, exclusive: true } : {}) }, () => {
      server.off('error', failed);
      server.on('error', (err) => log.error({ err: err.message }, 'data port listener error'));
      resolve(true);
    });
  });
}
