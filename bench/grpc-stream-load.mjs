// The load generator of the gRPC streaming targets (run.mjs starts it in its own process,
// pinned to the load CPU like h2load): one h2c connection (prior knowledge) keeping `calls`
// server-streaming calls of Bench/Stream in flight, each asking for `messages` replies of
// `bytes` payload bytes, for the round's seconds; a call that ends is replaced at once. It
// counts messages from their 5-byte frames without decoding them (the client's cost per
// message stays far below the upstream's), checks every frame's length and every finished
// call's grpc-status (0) and message count, and at the end cancels the calls in flight.
//
//   node bench/grpc-stream-load.mjs <base url> <calls> <seconds> <messages> <bytes>
//
// Prints one JSON line { messages, calls, seconds, rps, p99Ms, errors } and exits: rps is
// messages/s, p99Ms the 99th percentile of a whole call's time (0 when none finished).
// Bounded: it gives up after its seconds plus 15 s, and stops when its parent goes.
import { connect, constants } from 'node:http2';
import { performance } from 'node:perf_hooks';
import { onParentGone } from './lifecycle.mjs';
import { GRPC_HEADERS, SERVICE, methodPath, requestBody } from './grpc-wire.mjs';

const [url, callsArg, secondsArg, messagesArg, bytesArg] = process.argv.slice(2);
const [calls, seconds, count, bytes] = [callsArg, secondsArg, messagesArg, bytesArg].map(Number);
if (!url || !(calls > 0) || !(seconds > 0) || !(count > 0) || !(bytes >= 0)) {
  process.stderr.write('usage: node bench/grpc-stream-load.mjs <base url> <calls> <seconds> <messages> <bytes>\n');
  process.exit(2);
}
onParentGone(() => process.exit(1));
setTimeout(() => {
  process.stderr.write(`grpc-stream-load: not done ${seconds + 15} s after start\n`);
  process.exit(1);
}, (seconds + 15) * 1000).unref();

// A window of 1 MiB per stream and for the connection, as gRPC's own clients grow theirs
// (node's default 64 KiB would make a round trip per 600 messages the limit, not the relay).
const WINDOW = 1 << 20;
const BODY = requestBody('Stream', { count, size: bytes });
/** Every reply's encoded length: what each frame header must announce. */
const REPLY_LENGTH = SERVICE.Stream.responseSerialize({ payload: Buffer.alloc(bytes) }).length;
const HEAD = { ':method': 'POST', ':path': methodPath('Stream'), ...GRPC_HEADERS };

let messages = 0;
let errors = 0;
let finishedCalls = 0;
const durations = [];
let end = Infinity;
const inFlight = new Set();

const session = connect(url, { settings: { initialWindowSize: WINDOW } });
session.on('error', () => errors++);
await new Promise((resolve, reject) => {
  session.once('connect', resolve);
  session.once('error', reject);
});
session.setLocalWindowSize(WINDOW);

/** One call; when it ends inside the window, the next starts. */
function startCall() {
  const startedAt = performance.now();
  let stream;
  try {
    stream = session.request(HEAD);
  } catch {
    errors++; // the connection is going (a GOAWAY, an error): no more calls on it
    return;
  }
  inFlight.add(stream);
  let received = 0;
  let headerAt = 0; // bytes of the current frame header read (0..5)
  let left = 0; // bytes of the current message still to come
  let grpcStatus = null;
  const header = Buffer.alloc(5);
  stream.on('response', (h) => (grpcStatus = h['grpc-status'] ?? null));
  stream.on('trailers', (t) => (grpcStatus = t['grpc-status'] ?? grpcStatus));
  stream.on('data', (chunk) => {
    let done = 0;
    for (let i = 0; i < chunk.length; ) {
      if (left > 0) {
        const take = Math.min(left, chunk.length - i);
        i += take;
        left -= take;
        if (left === 0) done++;
        continue;
      }
      header[headerAt++] = chunk[i++];
      if (headerAt < 5) continue;
      headerAt = 0;
      left = header.readUInt32BE(1);
      if (header[0] !== 0 || left !== REPLY_LENGTH) errors++;
      if (left === 0) done++;
    }
    received += done;
    if (performance.now() <= end) messages += done;
  });
  stream.on('error', () => {
    if (performance.now() < end) errors++;
  });
  stream.on('close', () => {
    inFlight.delete(stream);
    const now = performance.now();
    if (now >= end) return; // cancelled at the end of the window, or finished after it
    if (grpcStatus !== '0' || received !== count || headerAt !== 0 || left !== 0) errors++;
    else durations.push(now - startedAt);
    finishedCalls++;
    startCall();
  });
  stream.end(BODY);
}

const start = performance.now();
end = start + seconds * 1000;
for (let i = 0; i < calls; i++) startCall();
await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
const elapsed = (Math.min(performance.now(), end) - start) / 1000;
for (const stream of inFlight) stream.close(constants.NGHTTP2_CANCEL);

durations.sort((a, b) => a - b);
const p99Ms = durations.length ? durations[Math.min(durations.length - 1, Math.ceil(durations.length * 0.99) - 1)] : 0;
const result = { messages, calls: finishedCalls, seconds: elapsed, rps: messages / elapsed, p99Ms, errors };
session.close();
process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0));
