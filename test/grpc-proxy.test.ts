import { after, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { connect, type ClientHttp2Session } from 'node:http2';
import { once } from 'node:events';
import * as grpc from '@grpc/grpc-js';
import { startGateway, type Gateway } from './helpers/gateway.js';
import { ROOT_KEY, apply } from './helpers/admin.js';
import { freePort } from './helpers/ports.js';
import { BOUNDED, sleep } from './helpers/wait.js';
import { echoClient, startEchoServer, streamPayload, unary, type EchoClient, type EchoReply, type EchoServer } from './helpers/grpc.js';

/**
 * gRPC through the gateway, with real @grpc/grpc-js peers on both sides: a node-engine
 * gateway whose data port takes h2c (prior knowledge, what an insecure grpc-js channel
 * speaks), and routes `grpc: true` to a cluster `protocol: "h2c"`.
 */

const KEY = 'grpc-test-key';
const KEY_SHA = createHash('sha256').update(KEY).digest('hex');
const PREFIX = '/switchyard.test.Echo/';

interface GrpcGateway {
  gw: Gateway;
  echo: EchoServer;
  /** A client to the gateway; `authority` picks the route by host. */
  client(t: Pick<TestContext, 'after'>, authority?: string): EchoClient;
}

async function grpcGateway(t: Pick<TestContext, 'after'>, opts: { drainGraceMs?: number } = {}): Promise<GrpcGateway> {
  const echo = await startEchoServer(t);
  const gw = await startGateway(t as TestContext, {
    engine: 'node',
    keys: [ROOT_KEY],
    ...(opts.drainGraceMs !== undefined ? { drainGraceMs: opts.drainGraceMs } : {}),
    edit: (c) => {
      (c.listen as Record<string, unknown>).h2c = true;
      // A short body gap bound, which a gRPC stream resting between messages must not meet.
      c.limits = { h2MaxConcurrentStreams: 400, bodyTimeoutMs: 300 };
    },
  });
  await apply(gw, [
    ['cluster', 'echo', { targets: [echo.address], protocol: 'h2c' }],
    ['cluster', 'nowhere', { targets: [`127.0.0.1:${await freePort()}`], protocol: 'h2c' }],
    ['route', 'echo', { pathPrefix: PREFIX, cluster: 'echo', grpc: true }],
    ['route', 'keyed', { hosts: ['keyed.test'], order: 10, pathPrefix: PREFIX, cluster: 'echo', grpc: true, steps: [{ code: 'key-auth', settings: { keys: [{ id: 'ci', sha256: KEY_SHA }] } }] }],
    ['route', 'limited', { hosts: ['limited.test'], order: 10, pathPrefix: PREFIX, cluster: 'echo', grpc: true, steps: [{ code: 'rate-limit', settings: { requestsPerSecond: 1, burst: 2, key: 'ip' } }] }],
    ['route', 'down', { hosts: ['down.test'], order: 10, pathPrefix: PREFIX, cluster: 'nowhere', grpc: true }],
    ['route', 'edited', { hosts: ['edited.test'], order: 10, pathPrefix: PREFIX, cluster: 'echo', grpc: true, steps: [{ code: 'request-headers', settings: { set: { 'x-env': 'prod' }, remove: ['x-secret'] } }, { code: 'response-headers', settings: { set: { 'x-served-by': 'gateway' } } }] }],
    // Not a gRPC route: a gRPC content-type lifts none of its bounds.
    ['route', 'plain', { hosts: ['plain.test'], order: 10, pathPrefix: PREFIX, cluster: 'echo' }],
    // The upstream does not see grpc-timeout: the gateway's deadline is the only one.
    ['route', 'deadline', { hosts: ['deadline.test'], order: 10, pathPrefix: PREFIX, cluster: 'echo', grpc: true, steps: [{ code: 'request-headers', settings: { remove: ['grpc-timeout'] } }] }],
    ['route', 'fenced', { hosts: ['fenced.test'], order: 10, pathPrefix: PREFIX, cluster: 'echo', grpc: true, steps: [{ code: 'ip-restriction', settings: { allow: ['10.0.0.0/8'] } }] }],
  ]);
  const address = gw.dataUrl.replace(/^http:\/\//, '');
  return {
    gw,
    echo,
    client: (tt, authority) => {
      // A channel of its own (no shared subchannel), so each test's calls share no connection with another's.
      const c = echoClient(address, { options: { 'grpc.use_local_subchannel_pool': 1, ...(authority ? { 'grpc.default_authority': authority } : {}) } });
      tt.after(() => c.close());
      return c;
    },
  };
}

const cleanups: (() => unknown)[] = [];
after(async () => {
  for (const fn of cleanups.reverse()) await fn();
});
let shared: Promise<GrpcGateway> | null = null;
/** One gateway for the tests that neither stop it nor publish. */
const sharedGateway = () => (shared ??= grpcGateway({ after: (fn) => void cleanups.push(fn) }));

function collect<T>(stream: grpc.ClientReadableStream<T>): Promise<T[]> {
  const out: T[] = [];
  stream.on('data', (m: T) => out.push(m));
  return new Promise((resolve, reject) => {
    stream.on('error', reject);
    stream.on('end', () => resolve(out));
  });
}

const codeOf = (err: unknown) => (err as grpc.ServiceError).code;

test('unary: the reply, the metadata the upstream saw, and an upstream status relayed from its trailers', BOUNDED, async (t) => {
  const g = await sharedGateway();
  const c = g.client(t);
  const md = new grpc.Metadata();
  md.set('x-team', 'payments');
  const r = await unary(c, { message: 'hello', payload: Buffer.from([0, 1, 2, 255]) }, md);
  assert.equal(r.message, 'hello');
  assert.deepEqual([...r.payload], [0, 1, 2, 255]);
  const seen = JSON.parse(r.metadata) as Record<string, string>;
  assert.equal(seen['x-team'], 'payments');
  assert.equal(seen['x-forwarded-proto'], 'http', 'the gateway added its forwarding headers');
  await assert.rejects(unary(c, { message: 'fail:5' }), (err: grpc.ServiceError) => err.code === grpc.status.NOT_FOUND && err.details === 'failed on purpose');
});

test("header steps edit a call's metadata both ways", BOUNDED, async (t) => {
  const g = await sharedGateway();
  const md = new grpc.Metadata();
  md.set('x-secret', 'client-only');
  let head: grpc.Metadata | null = null;
  const reply = await new Promise<EchoReply>((resolve, reject) => {
    const call = g.client(t, 'edited.test').unary({ message: 'm' }, md, (err, r) => (err ? reject(err) : resolve(r!)));
    call.on('metadata', (m: grpc.Metadata) => (head = m));
  });
  const seen = JSON.parse(reply.metadata) as Record<string, string>;
  assert.equal(seen['x-env'], 'prod');
  assert.equal(seen['x-secret'], undefined, 'removed before the upstream');
  assert.deepEqual(head!.get('x-served-by'), ['gateway']);
});

test('server streaming: 10,000 messages, every byte as sent', BOUNDED, async (t) => {
  const g = await sharedGateway();
  const replies = await collect(g.client(t).serverStream({ count: 10_000, size: 64 }));
  assert.equal(replies.length, 10_000);
  replies.forEach((r, i) => {
    assert.equal(r.index, i);
    assert.ok(r.payload.equals(streamPayload(i, 64)), `message ${i}`);
  });
});

test('client streaming: 200 messages summed and hashed by the upstream', BOUNDED, async (t) => {
  const g = await sharedGateway();
  const hash = createHash('sha256');
  let bytes = 0;
  const summary = await new Promise<{ count: number; bytes: number; sha256: string }>((resolve, reject) => {
    const call = g.client(t).clientStream((err, s) => (err ? reject(err) : resolve(s!)));
    for (let i = 0; i < 200; i++) {
      const payload = randomBytes(1 + ((i * 997) % 4096));
      hash.update(payload);
      bytes += payload.length;
      call.write({ message: String(i), payload });
    }
    call.end();
  });
  assert.deepEqual(summary, { count: 200, bytes, sha256: hash.digest('hex') });
});

test('bidi: 1 MiB messages both ways, byte for byte, each answered before the next is sent; a rest longer than limits.bodyTimeoutMs ends nothing', BOUNDED, async (t) => {
  const g = await sharedGateway();
  const call = g.client(t).bidi();
  const replies: EchoReply[] = [];
  for (let i = 0; i < 8; i++) {
    if (i === 4) await sleep(800); // the call rests: its deadline, not the body gap bound, limits it
    const payload = randomBytes(1024 * 1024);
    call.write({ message: `m${i}`, payload });
    // Full duplex: the answer to this message arrives while the request stream stays open.
    const [reply] = (await once(call, 'data')) as [EchoReply];
    assert.equal(reply.message, `m${i}`);
    assert.ok(reply.payload.equals(payload), `message ${i} byte for byte`);
    replies.push(reply);
  }
  call.end();
  await once(call, 'end');
  assert.equal(replies.length, 8);
});

test('a cancelled call reaches the upstream as cancelled', BOUNDED, async (t) => {
  const g = await sharedGateway();
  const before = g.echo.stats.cancelled;
  const call = g.client(t).unary({ message: 'slow', delayMs: 10_000 }, () => {});
  await sleep(300);
  call.cancel();
  await g.echo.cancelledAt(before + 1, 5_000);
});

/** A gRPC call made by hand over h2c, so the client enforces no deadline of its own: what the gateway answers is all there is. */
async function rawCall(t: Pick<TestContext, 'after'>, gw: Gateway, headers: Record<string, string>, body: Buffer): Promise<{ status: number; head: Record<string, unknown>; trailers: Record<string, unknown>; ms: number }> {
  const session: ClientHttp2Session = connect(gw.dataUrl);
  t.after(() => session.close());
  const started = performance.now();
  const req = session.request({ ':method': 'POST', ':path': `${PREFIX}Unary`, 'content-type': 'application/grpc', te: 'trailers', ...headers });
  req.end(body);
  const [head] = (await once(req, 'response')) as [Record<string, unknown>];
  let trailers: Record<string, unknown> = {};
  req.on('trailers', (tr: Record<string, unknown>) => (trailers = tr));
  req.resume();
  await once(req, 'close');
  return { status: Number(head[':status']), head, trailers, ms: performance.now() - started };
}

/** A framed EchoRequest `{message: 'slow', delay_ms: ms}` (field 1 string, field 3 varint). */
function slowRequest(ms: number): Buffer {
  const msg = Buffer.concat([Buffer.from([0x0a, 4]), Buffer.from('slow'), Buffer.from([0x18]), varint(ms)]);
  const frame = Buffer.alloc(5);
  frame.writeUInt32BE(msg.length, 1);
  return Buffer.concat([frame, msg]);
}

function varint(n: number): Buffer {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return Buffer.from(out);
}

test("grpc-timeout is the call's deadline: DEADLINE_EXCEEDED from the gateway, and the upstream's call cancelled", BOUNDED, async (t) => {
  const g = await sharedGateway();
  const before = g.echo.stats.cancelled;
  const r = await rawCall(t, g.gw, { 'grpc-timeout': '300m', ':authority': 'deadline.test' }, slowRequest(5_000));
  assert.equal(r.status, 200);
  assert.equal(r.trailers['grpc-status'], '4');
  assert.match(String(r.trailers['grpc-message']), /^Svc\.Data\.DeadlineExceeded: .*\(traceId \S+\)$/);
  assert.ok(r.ms >= 280 && r.ms < 2_000, `answered at the deadline (${r.ms.toFixed(0)} ms)`);
  await g.echo.cancelledAt(before + 1, 3_000);
  // And through grpc-js, whose own deadline races the gateway's: either way the call ends DEADLINE_EXCEEDED.
  await assert.rejects(unary(g.client(t), { message: 'slow', delayMs: 5_000 }, new grpc.Metadata(), { deadline: Date.now() + 300 }), (err) => codeOf(err) === grpc.status.DEADLINE_EXCEEDED);
});

test('a gRPC content-type on a route without grpc lifts no bound: a stalled body meets limits.bodyTimeoutMs', BOUNDED, async (t) => {
  const g = await sharedGateway();
  const session: ClientHttp2Session = connect(g.gw.dataUrl);
  t.after(() => session.close());
  const started = performance.now();
  const req = session.request({ ':method': 'POST', ':path': `${PREFIX}Unary`, ':authority': 'plain.test', 'content-type': 'application/grpc', te: 'trailers' });
  req.write(slowRequest(10).subarray(0, 3)); // part of a message, then nothing
  req.resume();
  // The answer ends the stream from the gateway's side; the client's half stays open.
  const [trailers] = (await once(req, 'trailers')) as [Record<string, unknown>];
  req.close();
  const ms = performance.now() - started;
  assert.equal(trailers['grpc-status'], '4', 'the body timeout, as a gRPC status');
  assert.match(String(trailers['grpc-message']), /^Svc\.Data\.BodyTimeout: /);
  assert.ok(ms < 2_000, `refused at the body bound (${ms.toFixed(0)} ms)`);
});

test("the gateway's own refusals are gRPC statuses: UNAUTHENTICATED, RESOURCE_EXHAUSTED, UNIMPLEMENTED, UNAVAILABLE", BOUNDED, async (t) => {
  const g = await sharedGateway();
  const keyed = g.client(t, 'keyed.test');
  await assert.rejects(unary(keyed, { message: 'x' }), (err: grpc.ServiceError) => {
    assert.equal(err.code, grpc.status.UNAUTHENTICATED);
    assert.match(err.details, /^Svc\.Data\.Unauthenticated: .*\(traceId \S+\)$/);
    return true;
  });
  const md = new grpc.Metadata();
  md.set('x-api-key', KEY);
  assert.equal((await unary(keyed, { message: 'with key' }, md)).message, 'with key');

  const limited = g.client(t, 'limited.test');
  const outcomes = await Promise.allSettled([1, 2, 3, 4].map(() => unary(limited, { message: 'x' })));
  const refused = outcomes.filter((o) => o.status === 'rejected').map((o) => codeOf((o as PromiseRejectedResult).reason));
  assert.ok(refused.length >= 2 && refused.every((c) => c === grpc.status.RESOURCE_EXHAUSTED), `burst 2 then RESOURCE_EXHAUSTED: ${JSON.stringify(refused)}`);

  // A method no route serves: UNIMPLEMENTED.
  const other = g.client(t);
  await assert.rejects(
    new Promise((resolve, reject) => other.makeUnaryRequest('/switchyard.test.Other/Call', (b: Buffer) => b, (b: Buffer) => b, Buffer.alloc(0), (err, r) => (err ? reject(err) : resolve(r)))),
    (err: grpc.ServiceError) => err.code === grpc.status.UNIMPLEMENTED && /^Svc\.Data\.NoRoute: /.test(err.details),
  );
  await assert.rejects(unary(g.client(t, 'down.test'), { message: 'x' }), (err: grpc.ServiceError) => err.code === grpc.status.UNAVAILABLE && /UpstreamUnreachable/.test(err.details));
  await assert.rejects(unary(g.client(t, 'fenced.test'), { message: 'x' }), (err: grpc.ServiceError) => err.code === grpc.status.PERMISSION_DENIED && /IpDenied/.test(err.details));
});

/** `n` server-streaming calls of `count` messages, one every `intervalMs`, all open at once; resolves with each call's message count or error code. */
function openStreams(client: EchoClient, n: number, count: number, intervalMs: number): { started: Promise<void>; done: Promise<(number | string)[]> } {
  let first = 0;
  let signal: () => void;
  const started = new Promise<void>((r) => (signal = r));
  const done = Promise.all(
    Array.from({ length: n }, () => {
      const call = client.serverStream({ count, size: 32, intervalMs });
      let got = 0;
      call.on('data', () => {
        if (got++ === 0 && ++first === n) signal();
      });
      return new Promise<number | string>((resolve) => {
        call.on('error', (err: grpc.ServiceError) => resolve(`${err.code} ${err.details}`));
        call.on('end', () => resolve(got));
      });
    }),
  );
  return { started, done };
}

test('a publish during 200 open streaming calls drops none', BOUNDED, async (t) => {
  const g = await grpcGateway(t);
  const { started, done } = openStreams(g.client(t), 200, 20, 100);
  await started;
  await apply(g.gw, [['route', 'extra', { pathPrefix: '/extra', cluster: 'echo' }]]);
  const results = await done;
  assert.deepEqual(results.filter((r) => r !== 20), [], 'every call got its 20 messages and ended OK');
});

test('SIGTERM: open calls finish within the drain grace; those still open at its end get UNAVAILABLE', BOUNDED, async (t) => {
  const g = await grpcGateway(t, { drainGraceMs: 1_500 });
  const c = g.client(t);
  const short = openStreams(c, 100, 5, 100); // 0.5 s: within the grace
  const long = openStreams(c, 100, 100, 100); // 10 s: past it
  await Promise.all([short.started, long.started]);
  const cancelledBefore = g.echo.stats.cancelled;
  const stopping = g.gw.stop('SIGTERM', 15_000);
  const [finished, cut] = await Promise.all([short.done, long.done]);
  assert.deepEqual(finished.filter((r) => r !== 5), [], 'the short calls all finished');
  assert.equal(cut.length, 100);
  for (const r of cut) assert.match(String(r), /^14 Svc\.Data\.Draining: /, 'the long calls ended UNAVAILABLE with the drain code');
  const exit = await stopping;
  assert.equal(exit.code, 0);
  assert.ok(exit.ms < 1_500 + 1_000, `stopped within the grace (${exit.ms} ms)`);
  await sleep(200);
  assert.ok(g.echo.stats.cancelled - cancelledBefore >= 100, "the long calls' upstream streams were cancelled");
});
