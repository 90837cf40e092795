import { EventEmitter } from 'node:events';
import type { TestContext } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { echoConstructor, type EchoClient, type EchoReply, type EchoRequest } from './grpc-echo-proto.js';
import { echoService, type EchoStats } from './grpc-echo-service.js';

export * from './grpc-echo-proto.js';
export { HEADERS_FIRST } from './grpc-echo-service.js';

/**
 * A real gRPC server (@grpc/grpc-js) of `switchyard.test.Echo` on 127.0.0.1, port chosen
 * by the kernel; h2c unless `tls` is given. What each method does:
 *  - Unary: waits `delayMs`, then answers `{message, payload}` with `metadata` = JSON of
 *    the call's metadata (binary values base64); `message: 'fail:<N>'` answers status N,
 *    details `failed on purpose` (trailers-only, as grpc-js answers a failure before any
 *    message; in trailers after the head with metadata HEADERS_FIRST). A call cancelled
 *    while waiting is never answered.
 *  - ServerStream: `count` replies, `index` 0..count-1, `payload` = streamPayload(index,
 *    size), one every `intervalMs` when set (else as fast as the stream drains).
 *  - ClientStream: `{count, bytes, sha256}` of the payloads, sha256 over them concatenated.
 *  - Bidi: each request back as a reply as it arrives (`index` its position), until the
 *    client ends.
 * A call the client cancels (or whose stream is reset) counts in `stats.cancelled` and
 * is emitted as `'cancelled'` (method name) on `onCancelled`; one the server finished
 * counts in `completed`.
 */
export interface EchoServer {
  port: number;
  address: string;
  stats: EchoStats;
  onCancelled: EventEmitter;
  /** Resolves once `stats.cancelled` reaches `n` (rejects after `timeoutMs`). */
  cancelledAt(n: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startEchoServer(t?: Pick<TestContext, 'after'>, opts: { tls?: { cert: string | Buffer; key: string | Buffer } } = {}): Promise<EchoServer> {
  const server = new grpc.Server();
  const stats: EchoStats = { calls: 0, cancelled: 0, completed: 0, lastMetadata: null };
  const onCancelled = new EventEmitter();

  server.addService(echoConstructor().service, echoService(stats, onCancelled));

  const creds = opts.tls
    ? grpc.ServerCredentials.createSsl(null, [{ cert_chain: Buffer.from(opts.tls.cert), private_key: Buffer.from(opts.tls.key) }], false)
    : grpc.ServerCredentials.createInsecure();
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync('127.0.0.1:0', creds, (err, p) => (err ? reject(err) : resolve(p)));
  });
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    server.forceShutdown();
  };
  t?.after(close);

  const cancelledAt = (n: number, timeoutMs = 5000) => new Promise<void>((resolve, reject) => {
    if (stats.cancelled >= n) return resolve();
    const timer = setTimeout(() => {
      onCancelled.off('cancelled', check);
      reject(new Error(`the echo server saw ${stats.cancelled} cancelled calls, not ${n}, within ${timeoutMs} ms`));
    }, timeoutMs);
    function check() {
      if (stats.cancelled < n) return;
      clearTimeout(timer);
      onCancelled.off('cancelled', check);
      resolve();
    }
    onCancelled.on('cancelled', check);
  });

  return { port, address: `127.0.0.1:${port}`, stats, onCancelled, cancelledAt, close };
}

/**
 * A grpc-js client of the Echo service at `address` (h2c, or TLS trusting `tls.ca`);
 * the caller closes it (`client.close()`). Messages as in grpc-echo-proto.ts (int64 as Number).
 */
export function echoClient(address: string, opts: { tls?: { ca: string | Buffer }; options?: grpc.ChannelOptions } = {}): EchoClient {
  const creds = opts.tls ? grpc.credentials.createSsl(Buffer.from(opts.tls.ca)) : grpc.credentials.createInsecure();
  const Ctor = echoConstructor();
  return new Ctor(address, creds, opts.options) as unknown as EchoClient;
}

/** A unary call as a promise (rejects with the grpc.ServiceError). */
export function unary(client: EchoClient, req: EchoRequest, md = new grpc.Metadata(), opts: grpc.CallOptions = {}): Promise<EchoReply> {
  return new Promise((resolve, reject) => {
    client.unary(req, md, opts, (err, reply) => (err ? reject(err) : resolve(reply!)));
  });
}
