import { request, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import protobuf from 'protobufjs';
import { ECHO_PROTO } from './grpc-echo-proto.js';
import { sleep } from './wait.js';

/**
 * gRPC-Web on the wire as the `grpc-web` package sends and reads it (PROTOCOL-WEB.md),
 * from Node over HTTP/1.1: protobuf messages (protobufjs, from the fixture proto) in
 * gRPC frames, base64 in text mode; answers split back into messages and the trailer frame.
 */

const root = protobuf.loadSync(ECHO_PROTO);
export const echoTypes = {
  EchoRequest: root.lookupType('switchyard.test.EchoRequest'),
  EchoReply: root.lookupType('switchyard.test.EchoReply'),
  StreamRequest: root.lookupType('switchyard.test.StreamRequest'),
};

/** The fixture proto as protobufjs JSON (what a page bundles instead of parsing .proto text). */
export const echoProtoJson = (): unknown => root.toJSON();

export type WireMode = 'binary' | 'text';

/** One gRPC frame: flag, 4-byte big-endian length, the bytes. */
export function grpcFrame(bytes: Uint8Array, flag = 0): Buffer {
  const f = Buffer.alloc(5 + bytes.length);
  f[0] = flag;
  f.writeUInt32BE(bytes.length, 1);
  f.set(bytes, 5);
  return f;
}

/** A message of `type` (camelCase fields) encoded and framed. */
export function framed(type: protobuf.Type, fields: Record<string, unknown>): Buffer {
  return grpcFrame(type.encode(type.fromObject(fields)).finish());
}

export interface GrpcWebAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body as it came, before any base64 decoding. */
  wire: Buffer;
  /** Data frames' messages, in order. */
  messages: Buffer[];
  /** The trailer frame's fields; null when the body had none. */
  trailers: Record<string, string> | null;
  /** Frames after the trailer frame (there must be none). */
  afterTrailers: number;
}

/** Base64 decoded group by group, as the grpc-web client does: padding may end any group. */
function decodeText(text: string): Buffer {
  if (!/^[A-Za-z0-9+/=]*$/.test(text) || text.length % 4 !== 0) throw new Error(`not base64 groups: ${text.slice(0, 80)}`);
  const parts: Buffer[] = [];
  for (let i = 0; i < text.length; i += 4) parts.push(Buffer.from(text.slice(i, i + 4), 'base64'));
  return Buffer.concat(parts);
}

export function parseGrpcWebBody(body: Buffer): Pick<GrpcWebAnswer, 'messages' | 'trailers' | 'afterTrailers'> {
  const messages: Buffer[] = [];
  let trailers: Record<string, string> | null = null;
  let afterTrailers = 0;
  for (let i = 0; i < body.length;) {
    if (i + 5 > body.length) throw new Error(`a frame prefix cut short at ${i}`);
    const length = body.readUInt32BE(i + 1);
    const bytes = body.subarray(i + 5, i + 5 + length);
    if (bytes.length !== length) throw new Error(`a frame cut short at ${i}`);
    if (trailers !== null) afterTrailers++;
    else if ((body[i]! & 0x80) === 0) messages.push(bytes);
    else {
      trailers = {};
      for (const line of bytes.toString('latin1').split('\r\n')) {
        const colon = line.indexOf(':');
        if (colon > 0) trailers[line.slice(0, colon)] = line.slice(colon + 1).trim();
      }
    }
    i += 5 + length;
  }
  return { messages, trailers, afterTrailers };
}

/**
 * POSTs a gRPC-Web call to `url` over HTTP/1.1 with the headers the grpc-web package
 * sends. `splitAt`: the body goes in two writes (chunked, no length) cut at that byte of
 * what goes on the wire, 20 ms apart, so the gateway reads it as a stream.
 */
export async function grpcWebCall(url: string, body: Buffer, mode: WireMode, opts: { headers?: Record<string, string>; splitAt?: number } = {}): Promise<GrpcWebAnswer> {
  const wire = mode === 'text' ? Buffer.from(body.toString('base64'), 'latin1') : body;
  const headers: Record<string, string> = {
    'content-type': mode === 'text' ? 'application/grpc-web-text' : 'application/grpc-web+proto',
    ...(mode === 'text' ? { accept: 'application/grpc-web-text' } : {}),
    'x-grpc-web': '1',
    'x-user-agent': 'grpc-web-javascript/0.1',
    ...(opts.splitAt === undefined ? { 'content-length': String(wire.length) } : {}),
    ...opts.headers,
  };
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    const req = request(url, { method: 'POST', headers, agent: false }, resolve).on('error', reject);
    if (opts.splitAt === undefined) return void req.end(wire);
    req.write(wire.subarray(0, opts.splitAt));
    void sleep(20).then(() => req.end(wire.subarray(opts.splitAt)));
  });
  const chunks: Buffer[] = [];
  for await (const c of res) chunks.push(c as Buffer);
  const got = Buffer.concat(chunks);
  const type = String(res.headers['content-type'] ?? '');
  const decoded = type.startsWith('application/grpc-web-text') ? decodeText(got.toString('latin1')) : got;
  return { status: res.statusCode ?? 0, headers: res.headers, wire: got, ...parseGrpcWebBody(decoded) };
}

/** An EchoReply decoded (camelCase, defaults filled, bytes as Buffer). */
export function echoReply(bytes: Buffer): { message: string; payload: Buffer; index: number; metadata: string } {
  const o = echoTypes.EchoReply.toObject(echoTypes.EchoReply.decode(bytes), { defaults: true, longs: Number });
  return { message: o.message as string, payload: Buffer.from(o.payload as Uint8Array), index: o.index as number, metadata: o.metadata as string };
}
