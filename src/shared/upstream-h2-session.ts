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
 * The workers' pools (worker/engine/upstream-h2/) and the supervisor's health probes both open
 * their sessions here, so both connect alike. Besides the engine's folder and
 * worker/engine/upstream-h2/, this is the one place that imports node:http2 (docs/architecture.md).
 */

/**
 * The receive window of each stream this side opens (SETTINGS_INITIAL_WINDOW_SIZE), 4× node's
 * 64 KiB: the target may send a stream this far ahead of the client reading it. A stream whose
 * client reads slowly is not read either (H2Answer pauses it), so this is what one call in
 * flight holds of its answer at most: 256 KiB, a connection that many per stream open (node
 * renews the connection's window as data arrives, whether or not its stream is read).
 * Measured (bench grpcStream, 8 calls in flight): 64 KiB 0.97, 256 KiB 0.96, 1 MiB 1.03 of
 * direct once the connection window below is raised; without it 0.65–0.68 whatever this is.
 */
export const STREAM_WINDOW_BYTES = 256 * 1024;
/**
 * The connection's receive window, raised from nghttp2's 64 KiB: all of a connection's
 * streams shared one window's worth of answer per round trip (streamed gRPC through the
 * gateway 0.65 of direct, 0.96–1.03 with 8 MiB). It bounds no memory (see above).
 */
export const SESSION_WINDOW_BYTES = 8 * 1024 * 1024;

/** What this side announces: a gateway has no use for server push. */
const SETTINGS = { enablePush: false, initialWindowSize: STREAM_WINDOW_BYTES };

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
      // Once node has set the session up (on an already connected socket, it does so before 'connect').
      session.once('connect', () => session.setLocalWindowSize(SESSION_WINDOW_BYTES));
    } catch (e) {
      socket.destroy();
      return done(e as Error, null);
    }
    done(null, session);
  });
}
