import type { X509Certificate } from 'node:crypto';
import type { ClientCertificate } from '../../../contracts/client-certificate.js';
import { clientCertificateOf } from '../../../shared/client-cert-names.js';

/** What the engine reads of a client's TLS socket (h2: its session's socket). */
export interface PeerSocket {
  readonly encrypted?: boolean;
  readonly authorized?: boolean;
  getPeerX509Certificate?(): X509Certificate | undefined;
}

/**
 * The verified client certificate of each TLS connection, read when a route first asks and
 * kept while the connection lives: an h2 session's streams and an HTTP/1.1 connection's
 * requests parse it once. Routes that never ask cost nothing.
 */
export class PeerIdentities {
  private readonly seen = new WeakMap<object, ClientCertificate | null>();

  of(socket: PeerSocket | null | undefined): ClientCertificate | null {
    if (!socket?.encrypted) return null;
    let found = this.seen.get(socket);
    if (found === undefined) {
      // `authorized`: the chain verified against the configured CAs. An optional-mode
      // handshake with an unverified certificate completes, but its certificate counts for nothing.
      const x509 = socket.authorized === true ? socket.getPeerX509Certificate?.() : undefined;
      found = x509 ? clientCertificateOf(x509) : null;
      this.seen.set(socket, found);
    }
    return found;
  }
}
