import { connect as h2Connect, type ClientHttp2Session } from 'node:http2';
import type { TLSSocket } from 'node:tls';
import { buildConnector } from 'undici';
import type { TargetConnection } from './upstream-connect.js';
import { UpstreamTlsError } from './upstream-tls.js';

/**
 * An HTTP/2 session to one cluster target, opened on a socket made by the target's
 * TargetConnection (upstream-connect.ts): the tenant's upstream policy and, for https, the
 * cluster's TLS settings apply as they do to HTTP/1.1, and a connect failure is the same
 * error (refused, timed out, denied, failed handshake). `h2` targets are TLS with ALPN h2;
 * a handshake that settles on another protocol is refused as a failed TLS connection.
 * `h2c` targets get HTTP/2 with prior knowledge on a plain socket.
 *
 * The workers' pools (worker/upstream-h2/) and the supervisor's health probes both open
 * their sessions here, so both connect alike. Besides the engine's folder and
 * worker/upstream-h2/, this is the one place that imports node:http2 (docs/architecture.md).
 */

/** What this side announces: a gateway has no use for server push. */
const SETTINGS = { enablePush: false };

/** A session as its users outside the places that import node:http2 see it (the health probes). */
export type UpstreamH2Session = ClientHttp2Session;

/** Streams a session may open before the peer's SETTINGS say (node's own assumption, and nghttp2's). */
export const ASSUMED_MAX_STREAMS = 100;

/** The error of a TLS connection that did not negotiate h2 (no ALPN, or http/1.1). */
export function alpnRefused(target: string, protocol: string | false | null | undefined): UpstreamTlsError {
  return new UpstreamTlsError(target, 'ALPN_NOT_H2', `the upstream negotiated ${protocol || 'no application protocol'} instead of h2`);
}

/** `done` gets the session (its socket connected, the preface not yet acknowledged) or the connect failure. */
export function openH2Session(
  conn: TargetConnection,
  target: string,
  done: (err: Error | null, session: ClientHttp2Session | null) => void,
  onTlsFailure?: (err: UpstreamTlsError) => void,
): void {
  const url = new URL(conn.origin);
  const secure = url.protocol === 'https:';
  const connector = typeof conn.connect === 'function' ? conn.connect : buildConnector(conn.connect);
  // undici's connector takes an IPv6 host without its brackets, as undici's client passes it.
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const port = url.port || (secure ? '443' : '80');
  connector({ hostname, host: url.host, protocol: url.protocol, port, ...(conn.servername !== undefined ? { servername: conn.servername } : {}) }, (err, socket) => {
    if (err !== null) return done(err, null);
    if (secure && (socket as TLSSocket).alpnProtocol !== 'h2') {
      const refused = alpnRefused(target, (socket as TLSSocket).alpnProtocol);
      socket.destroy();
      onTlsFailure?.(refused);
      return done(refused, null);
    }
    let session: ClientHttp2Session;
    try {
      session = h2Connect(conn.origin, { createConnection: () => socket, settings: SETTINGS, peerMaxConcurrentStreams: ASSUMED_MAX_STREAMS });
    } catch (e) {
      socket.destroy();
      return done(e as Error, null);
    }
    done(null, session);
  });
}
