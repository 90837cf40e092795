// The smoke's gRPC server: node:http2 over cleartext (what a cluster `protocol: "h2c"`
// reaches), no grpc-js. Any method but Slow echoes the request's first framed message with
// trailers grpc-status 0; /smoke.Echo/Slow never answers and records when its stream closes,
// so the smoke can see a client's cancel or a deadline reach the upstream.
import { createServer } from 'node:http2';

export const SLOW = '/smoke.Echo/Slow';

/** Listening on 127.0.0.1 at a port the kernel picked; `slow.closed` lists each Slow stream's end. */
export async function startGrpcUpstream() {
  const server = createServer();
  const sessions = new Set();
  const slow = { opened: 0, closed: [] };
  server.on('session', (s) => {
    sessions.add(s);
    s.once('close', () => sessions.delete(s));
  });
  server.on('stream', (stream, headers) => {
    // A cancel resets the stream: its error is the point here, not a failure.
    stream.on('error', () => {});
    if (headers[':method'] !== 'POST' || !String(headers['content-type']).startsWith('application/grpc')) {
      stream.respond({ ':status': 415 }, { endStream: true });
      return;
    }
    if (headers[':path'] === SLOW) {
      slow.opened += 1;
      stream.resume();
      stream.once('close', () => slow.closed.push({ at: Date.now(), rstCode: stream.rstCode }));
      return;
    }
    const chunks = [];
    stream.on('data', (c) => chunks.push(c));
    stream.once('end', () => {
      const body = Buffer.concat(chunks);
      const size = body.length >= 5 ? body.readUInt32BE(1) : -1;
      if (size < 0 || body.length < 5 + size) {
        stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '13', 'grpc-message': 'no whole message' }, { endStream: true });
        return;
      }
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      stream.end(body.subarray(0, 5 + size));
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${server.address().port}`,
    slow,
    /** Resolves with the (closedCount + 1)th Slow close, or rejects after `ms`. */
    slowClosed(closedCount, ms) {
      const deadline = Date.now() + ms;
      return new Promise((resolve, reject) => {
        const look = () => {
          if (slow.closed.length > closedCount) resolve(slow.closed[closedCount]);
          else if (Date.now() > deadline) reject(new Error(`the upstream's Slow stream still open after ${ms} ms (${slow.opened} opened)`));
          else setTimeout(look, 10);
        };
        look();
      });
    },
    close() {
      for (const s of sessions) s.destroy();
      server.close();
    },
  };
}

/** One gRPC message frame: no compression, a 4-byte big-endian length, the bytes. */
export function frame(message) {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(message.length, 1);
  return Buffer.concat([head, message]);
}
