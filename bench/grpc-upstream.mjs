// The upstream of the gRPC targets: a @grpc/grpc-js server over h2c (cleartext HTTP/2,
// prior knowledge) serving grpc-bench.proto's Bench service. Runs in its own process, on the
// load CPU beside the load generator, like the HTTP upstream.
//
//   node bench/grpc-upstream.mjs [port]
//
// Unary answers every call with the same small reply and counts it (Served reads the count).
// Stream sends `count` replies of `size` payload bytes, encoded once per size (the upstream's
// cost per message is then grpc-js's framing and writing, not protobuf), with backpressure,
// and stops when the call is cancelled.
//
// Prints one line `ready port=N` on stdout once it listens; exits when its stdin closes (the
// parent died) or on SIGTERM/SIGINT.
import { Server, ServerCredentials, status } from '@grpc/grpc-js';
import { exitWithParent } from './lifecycle.mjs';
import { SERVICE, UNARY_REPLY } from './grpc-wire.mjs';

const port = Number(process.argv[2] ?? 0);
/** A stream call's bounds: enough for any target, small enough that a bad request cannot fill memory. */
const MAX_COUNT = 10_000_000;
const MAX_SIZE = 1 << 20;

let unaryServed = 0;
const encodedReplies = new Map();
/** The StreamReply of `size` payload bytes, serialized once. */
function encodedReply(size) {
  let reply = encodedReplies.get(size);
  if (!reply) {
    reply = SERVICE.Stream.responseSerialize({ payload: Buffer.alloc(size, 'x') });
    encodedReplies.set(size, reply);
  }
  return reply;
}

// Stream's replies are written already serialized: its serializer passes them through.
const service = { ...SERVICE, Stream: { ...SERVICE.Stream, responseSerialize: (encoded) => encoded } };

const server = new Server();
server.addService(service, {
  Unary(_call, callback) {
    unaryServed++;
    callback(null, UNARY_REPLY);
  },
  Stream(call) {
    const { count, size } = call.request;
    if (!(count >= 0 && count <= MAX_COUNT && size >= 0 && size <= MAX_SIZE)) {
      call.emit('error', { code: status.INVALID_ARGUMENT, details: `count must be 0..${MAX_COUNT} and size 0..${MAX_SIZE}` });
      return;
    }
    const reply = encodedReply(size);
    let sent = 0;
    let cancelled = false;
    call.once('cancelled', () => (cancelled = true));
    const pump = () => {
      while (sent < count && !cancelled) {
        sent++;
        if (!call.write(reply)) return void call.once('drain', pump);
      }
      if (!cancelled) call.end();
    };
    pump();
  },
  Served(_call, callback) {
    callback(null, { unary: unaryServed });
  },
});

server.bindAsync(`127.0.0.1:${port}`, ServerCredentials.createInsecure(), (err, bound) => {
  if (err) {
    process.stderr.write(`grpc-upstream: ${err.message}\n`);
    process.exit(1);
  }
  process.stdout.write(`ready port=${bound}\n`);
});
exitWithParent(() => server.forceShutdown());
