import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { TestContext } from 'node:test';
import type { Pem } from './tls-certs.js';

/**
 * A real node:https upstream on 127.0.0.1 (port chosen by the kernel) with the given
 * certificate. It answers 200 with a JSON echo of what the TLS layer and HTTP saw, and
 * records each request: the SNI name the client sent (false: none), the client
 * certificate's subject CN (mTLS), the Host header and the path.
 */
export interface SeenRequest {
  servername: string | false;
  clientCn: string | null;
  host: string | undefined;
  path: string;
}

export interface HttpsUpstream {
  port: number;
  /** `https://127.0.0.1:<port>`, ready for a cluster's targets. */
  target: string;
  seen: SeenRequest[];
  /** Handshakes that failed on the server's side (a client without a certificate, a client that gave up). */
  tlsErrors: string[];
}

export interface HttpsUpstreamOptions {
  /** Demand a client certificate signed by this CA (PEM). */
  clientCa?: string;
  /** Cap the protocol, e.g. 'TLSv1.2', where a refused client certificate is a handshake alert. */
  maxVersion?: 'TLSv1.2' | 'TLSv1.3';
}

export async function httpsUpstream(t: TestContext, cert: Pem, o: HttpsUpstreamOptions = {}): Promise<HttpsUpstream> {
  const seen: SeenRequest[] = [];
  const tlsErrors: string[] = [];
  const server: Server = createServer(
    {
      cert: cert.cert,
      key: cert.key,
      ...(o.clientCa ? { requestCert: true, rejectUnauthorized: true, ca: o.clientCa } : {}),
      ...(o.maxVersion ? { maxVersion: o.maxVersion } : {}),
    },
    (req, res) => {
      const sock = req.socket as TLSSocket;
      const peer = o.clientCa ? sock.getPeerCertificate() : null;
      const entry: SeenRequest = { servername: sock.servername ?? false, clientCn: typeof peer?.subject?.CN === 'string' ? peer.subject.CN : null, host: req.headers.host, path: req.url ?? '' };
      seen.push(entry);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(entry));
    },
  );
  server.on('tlsClientError', (err: NodeJS.ErrnoException) => tlsErrors.push(err.code ?? err.message));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  const port = (server.address() as AddressInfo).port;
  return { port, target: `https://127.0.0.1:${port}`, seen, tlsErrors };
}
