import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { loadSync, type Options } from '@grpc/proto-loader';

/**
 * The test service `switchyard.test.Echo` (test/fixtures/grpc/echo.proto) as both test
 * peers load it, and its messages as plain objects. Field names are camelCase
 * (keepCase false); int64 values are Numbers (`longs: Number`: the byte counts the tests
 * use stay far below 2^53); `defaults: true` so a zero (`index: 0`) is there, not missing.
 */
export const ECHO_PROTO = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'grpc', 'echo.proto');
export const ECHO_SERVICE = 'switchyard.test.Echo';

const LOADER: Options = { keepCase: false, longs: Number, enums: String, defaults: true, oneofs: true };

export interface EchoRequest { message?: string; payload?: Buffer | Uint8Array; delayMs?: number }
export interface EchoReply { message: string; payload: Buffer; index: number; metadata: string }
export interface StreamRequest { count?: number; size?: number; intervalMs?: number }
export interface StreamSummary { count: number; bytes: number; sha256: string }

type Done<T> = (err: grpc.ServiceError | null, value?: T) => void;

/** The grpc-js client of the Echo service, with its methods typed (grpc-js's own are `Function`). */
export interface EchoClient extends grpc.Client {
  unary(req: EchoRequest, done: Done<EchoReply>): grpc.ClientUnaryCall;
  unary(req: EchoRequest, md: grpc.Metadata, done: Done<EchoReply>): grpc.ClientUnaryCall;
  unary(req: EchoRequest, md: grpc.Metadata, opts: grpc.CallOptions, done: Done<EchoReply>): grpc.ClientUnaryCall;
  serverStream(req: StreamRequest, md?: grpc.Metadata, opts?: grpc.CallOptions): grpc.ClientReadableStream<EchoReply>;
  clientStream(done: Done<StreamSummary>): grpc.ClientWritableStream<EchoRequest>;
  clientStream(md: grpc.Metadata, done: Done<StreamSummary>): grpc.ClientWritableStream<EchoRequest>;
  clientStream(md: grpc.Metadata, opts: grpc.CallOptions, done: Done<StreamSummary>): grpc.ClientWritableStream<EchoRequest>;
  bidi(md?: grpc.Metadata, opts?: grpc.CallOptions): grpc.ClientDuplexStream<EchoRequest, EchoReply>;
}

let loaded: grpc.ServiceClientConstructor | undefined;

/** The generated client constructor; its `service` is the definition a server adds. */
export function echoConstructor(): grpc.ServiceClientConstructor {
  if (!loaded) {
    const pkg = grpc.loadPackageDefinition(loadSync(ECHO_PROTO, LOADER));
    loaded = ((pkg.switchyard as grpc.GrpcObject).test as grpc.GrpcObject).Echo as grpc.ServiceClientConstructor;
  }
  return loaded;
}

/**
 * The payload of ServerStream's reply `index` of `size` bytes: deterministic, different
 * per reply, so a test can check every byte that came through.
 */
export function streamPayload(index: number, size: number): Buffer {
  const b = Buffer.alloc(size);
  for (let i = 0; i < size; i++) b[i] = (index * 31 + i * 7) & 0xff;
  return b;
}
