// The WebSocket load generator (run.mjs starts it in its own process, pinned to the load
// CPU like wrk): N connections, each sending one text message and awaiting its echo in a
// loop, for the round's seconds. What it measures is echoed messages/s and the p99 of a
// message's round trip; the connections are all open before the clock starts.
//
//   node bench/ws-load.mjs <ws url> <connections> <seconds> <message bytes>
//
// Prints one JSON line { messages, seconds, rps, p99Ms, handshakeFailures, errors } and
// exits. Bounded: it gives up after its seconds plus 15 s, and stops when its parent goes.
import { performance } from 'node:perf_hooks';
import { WebSocket } from 'ws';
import { onParentGone } from './lifecycle.mjs';

const [url, connectionsArg, secondsArg, bytesArg] = process.argv.slice(2);
const connections = Number(connectionsArg);
const seconds = Number(secondsArg);
const bytes = Number(bytesArg);
if (!url || !(connections > 0) || !(seconds > 0) || !(bytes > 0)) {
  process.stderr.write('usage: node bench/ws-load.mjs <ws url> <connections> <seconds> <message bytes>\n');
  process.exit(2);
}
onParentGone(() => process.exit(1));
setTimeout(() => {
  process.stderr.write(`ws-load: not done ${seconds + 15} s after start\n`);
  process.exit(1);
}, (seconds + 15) * 1000).unref();

const PAYLOAD = Buffer.alloc(bytes, 'x'); // sent as a text frame
const latencies = [];
let handshakeFailures = 0;
let errors = 0;
let end = Infinity;

/** Resolves with an open WebSocket, or null when the handshake failed (counted once). */
function open() {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    let settled = false;
    const done = (value, count) => {
      if (settled) return;
      settled = true;
      count?.();
      resolve(value);
    };
    ws.once('open', () => done(ws));
    ws.once('unexpected-response', (req) => {
      done(null, () => handshakeFailures++);
      req.destroy();
    });
    ws.on('error', () => done(null, () => errors++));
  });
}

/** Send, await the echo, repeat until `end`; resolves when this connection stops. */
function drive(ws) {
  return new Promise((resolve) => {
    let sentAt = 0;
    const send = () => {
      sentAt = performance.now();
      ws.send(PAYLOAD, { binary: false });
    };
    ws.on('message', (data, isBinary) => {
      const now = performance.now();
      if (isBinary || !PAYLOAD.equals(data)) errors++; // not the message that was sent
      if (now <= end) latencies.push(now - sentAt);
      if (now < end) send();
      else resolve();
    });
    // Closed or failed before the round ended: the connection's loop is over.
    ws.once('close', () => {
      if (performance.now() < end) errors++;
      resolve();
    });
    send();
  });
}

const sockets = (await Promise.all(Array.from({ length: connections }, open))).filter(Boolean);
const start = performance.now();
end = start + seconds * 1000;
await Promise.all(sockets.map(drive));
const elapsed = (Math.min(performance.now(), end) - start) / 1000;

latencies.sort((a, b) => a - b);
const p99Ms = latencies.length ? latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))] : 0;
const rps = elapsed > 0 ? latencies.length / elapsed : 0;
const result = { messages: latencies.length, seconds: elapsed, rps, p99Ms, handshakeFailures, errors };

// A clean close (1000) of every connection, then out; at most a second's wait for the closes.
let stillOpen = sockets.filter((ws) => ws.readyState === WebSocket.OPEN);
let exited = false;
const exit = () => {
  if (exited) return;
  exited = true;
  process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0));
};
setTimeout(exit, 1_000);
if (!stillOpen.length) exit();
for (const ws of stillOpen) {
  ws.once('close', () => {
    stillOpen = stillOpen.filter((x) => x !== ws);
    if (!stillOpen.length) exit();
  });
  ws.close(1000);
}
