import { createSecureServer, createServer, type Http2Server, type Http2SecureServer, type IncomingHttpHeaders, type ServerHttp2Session, type ServerHttp2Stream, type Settings } from 'node:http2';
import type { AddressInfo } from 'node:net';
import type { Pem } from './tls-certs.js';

/**
 * Real node:http2 upstreams for the HTTP/2 client's tests: h2c (prior knowledge) or TLS
 * (ALPN h2, a certificate from tls-certs.ts). Every stream goes to `onStream`; sessions are
 * kept so a test can GOAWAY or count them, and every stream's end is recorded (its path,
 * how it closed: rstCode 8 is CANCEL).
 */
export interface H2Upstream {
  /** The target as a cluster writes it: `127.0.0.1:port`, or `https://127.0.0.1:port` with TLS. */
  target: string;
  port: number;
  server: Http2Server | Http2SecureServer;
  sessions: ServerHttp2Session[];
  /** Each stream that closed: its :path and rstCode (0 after a clean end). */
  closed: { path: string; rstCode: number }[];
  /** Resolves with the next stream to close at `path`. */
  closeOf(path: string): Promise<{ path: string; rstCode: number }>;
}

export type StreamHandler = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, session: ServerHttp2Session) => void;

export interface H2UpstreamOptions {
  /** TLS with this certificate; absent: h2c. */
  tls?: Pem;
  settings?: Settings;
}

export async function h2Upstream(t: { after(fn: () => unknown): void }, onStream: StreamHandler, o: H2UpstreamOptions = {}): Promise<H2Upstream> {
  const server = o.tls
    ? createSecureServer({ cert: o.tls.cert, key: o.tls.key, ...(o.settings ? { settings: o.settings } : {}) })
    : createServer(o.settings ? { settings: o.settings } : {});
  const sessions: ServerHttp2Session[] = [];
  const closed: { path: string; rstCode: number }[] = [];
  const waiters: { path: string; resolve: (c: { path: string; rstCode: number }) => void }[] = [];
  server.on('session', (s: ServerHttp2Session) => {
    sessions.push(s);
    s.on('error', () => {});
  });
  server.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => {
    const path = String(headers[':path']);
    stream.on('error', () => {});
    stream.once('close', () => {
      const c = { path, rstCode: stream.rstCode ?? 0 };
      closed.push(c);
      const i = waiters.findIndex((w) => w.path === path);
      if (i >= 0) waiters.splice(i, 1)[0]!.resolve(c);
    });
    onStream(stream, headers, stream.session as ServerHttp2Session);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(
    () =>
      new Promise<void>((r) => {
        for (const s of sessions) s.destroy();
        server.close(() => r());
      }),
  );
  const port = (server.address() as AddressInfo).port;
  return {
    target: o.tls ? `https://127.0.0.1:${port}` : `127.0.0.1:${port}`,
    port,
    server,
    sessions,
    closed,
    closeOf: (path) => new Promise((resolve) => waiters.push({ path, resolve })),
  };
}
