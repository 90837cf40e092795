// The bench's gRPC on the wire, shared by grpc-upstream.mjs, the sanity checks and the
// load: the service loaded from grpc-bench.proto (proto-loader, no generated code), a
// message's 5-byte frame, and one call over raw node:http2 with the headers h2load sends,
// so that what a check proves is what the load then sends.
import { connect } from 'node:http2';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadSync } from '@grpc/proto-loader';

const PROTO = join(dirname(fileURLToPath(import.meta.url)), 'grpc-bench.proto');
export const SERVICE_NAME = 'switchyard.bench.Bench';
/** The service definition (grpc-js's addService takes it as it is): per method, its path and (de)serializers. */
export const SERVICE = loadSync(PROTO, { longs: Number, defaults: true })[SERVICE_NAME];

/** The request head of every gRPC call the bench makes (h2load gets the same two with -H). */
export const GRPC_HEADERS = { 'content-type': 'application/grpc', te: 'trailers' };
/** The unary target's request: one short string. */
export const UNARY_REQUEST = { name: 'bench' };
/** The unary reply the upstream sends and a check expects. */
export const UNARY_REPLY = { message: 'hello bench' };

/** `/switchyard.bench.Bench/<method>`: the :path of a call. */
export const methodPath = (method) => SERVICE[method].path;

/** A length-prefixed message: flag 0 (not compressed), 4-byte big-endian length, the bytes. */
export function frame(message) {
  const out = Buffer.allocUnsafe(5 + message.length);
  out[0] = 0;
  out.writeUInt32BE(message.length, 1);
  message.copy(out, 5);
  return out;
}

/** The messages of a whole length-prefixed body; throws on a compressed or cut frame. */
export function unframe(body) {
  const messages = [];
  for (let at = 0; at < body.length; ) {
    if (body.length - at < 5) throw new Error(`a cut gRPC frame header (${body.length - at} bytes)`);
    if (body[at] !== 0) throw new Error(`a gRPC frame with flag ${body[at]} (compression is not asked for)`);
    const end = at + 5 + body.readUInt32BE(at + 1);
    if (end > body.length) throw new Error('a cut gRPC message');
    messages.push(body.subarray(at + 5, end));
    at = end;
  }
  return messages;
}

/** The request body of `method` with `request` (an object of its request message) in one frame. */
export const requestBody = (method, request) => frame(SERVICE[method].requestSerialize(request));

/**
 * One call of `method` at `baseUrl` (http: h2c with prior knowledge), over a session of its
 * own. Resolves with { status, grpcStatus, grpcMessage, inTrailers, replies } (replies decoded;
 * grpc-status from the trailers, or from the head of a trailers-only answer: `inTrailers` says
 * which); rejects on a transport error or after `timeoutMs`.
 */
export function grpcCall(baseUrl, method, request, { timeoutMs = 5_000 } = {}) {
  return new Promise((resolve, reject) => {
    const session = connect(baseUrl);
    const timer = setTimeout(() => fail(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    function fail(err) {
      clearTimeout(timer);
      session.destroy();
      reject(err);
    }
    session.once('error', fail);
    const stream = session.request({ ':method': 'POST', ':path': methodPath(method), ...GRPC_HEADERS });
    let head = {};
    let tail = {};
    const chunks = [];
    stream.once('response', (h) => (head = h));
    stream.once('trailers', (t) => (tail = t));
    stream.on('data', (d) => chunks.push(d));
    stream.once('error', fail);
    stream.once('end', () => {
      clearTimeout(timer);
      session.close();
      try {
        const status = tail['grpc-status'] ?? head['grpc-status'];
        const replies = unframe(Buffer.concat(chunks)).map((m) => SERVICE[method].responseDeserialize(m));
        const grpcMessage = tail['grpc-message'] ?? head['grpc-message'] ?? '';
        resolve({ status: head[':status'], grpcStatus: status === undefined ? null : Number(status), grpcMessage, inTrailers: 'grpc-status' in tail, replies });
      } catch (err) {
        reject(err);
      }
    });
    stream.end(requestBody(method, request));
  });
}
