import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer, type ServerHttp2Stream } from 'node:http2';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// @ts-expect-error: the bench is plain JavaScript without type declarations
import { grpcStreamLoad, grpcUnaryLoad } from '../../bench/grpc-load.mjs';
// @ts-expect-error: the bench is plain JavaScript without type declarations
import { SERVICE, frame, grpcCall, methodPath } from '../../bench/grpc-wire.mjs';
// @ts-expect-error: the bench is plain JavaScript without type declarations
import { h2Load } from '../../bench/h2-load.mjs';
// @ts-expect-error: the bench is plain JavaScript without type declarations
import { expectGrpc } from '../../bench/sanity-checks.mjs';
import { BOUNDED } from '../helpers/wait.js';

type LoadResult = { rps: number; p99Ms: number; requests: number; non2xx: number; errors: number; answered2xx?: number; grpcNotServed?: number };
type Load = (url: string, seconds: number) => Promise<LoadResult>;

const BENCH = join(import.meta.dirname, '..', '..', 'bench');
const HAS_H2LOAD = spawnSync('sh', ['-c', 'command -v h2load'], { stdio: 'ignore' }).status === 0;

/** A child of the test, stdin a pipe (the bench's processes exit when it closes), stopped after the test. */
function spawnTracked(t: TestContext, cmd: string, args: string[]): ChildProcess {
  const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  t.after(() => void child.kill('SIGKILL'));
  return child;
}

/** bench/grpc-upstream.mjs in its own process; resolves with its base URL once it listens on a port of its choosing. */
async function startGrpcUpstream(t: TestContext): Promise<string> {
  const child = spawnTracked(t, process.execPath, [join(BENCH, 'grpc-upstream.mjs'), '0']);
  const port = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const m = /^ready port=(\d+)$/m.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`grpc-upstream exited ${code}`)));
  });
  return `http://127.0.0.1:${port}`;
}

/** An h2c server in this process answering every call with `answer(stream)`; resolves with its base URL. */
async function fakeGrpcServer(t: TestContext, answer: (stream: ServerHttp2Stream) => void): Promise<string> {
  const server = createServer();
  server.on('stream', (stream) => {
    stream.resume(); // the request body is not read
    stream.on('error', () => {}); // a stream cancelled by the load at its end
    answer(stream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise((r) => server.close(r)));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

/** Replies of a Bench/Stream call as grpc-stream-load.mjs expects them: `count` frames of a `size`-byte payload, cut by `shortBy` bytes. */
function streamReplies(stream: ServerHttp2Stream, count: number, size: number, grpcStatus: string, shortBy = 0): void {
  const reply = frame((SERVICE.Stream.responseSerialize({ payload: Buffer.alloc(size) }) as Buffer).subarray(shortBy));
  stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
  stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': grpcStatus }));
  stream.end(Buffer.concat(Array.from({ length: count }, () => reply)));
}

const streamLoad = (t: TestContext, messages: number, bytes: number): Load =>
  grpcStreamLoad({ calls: 2, messages, bytes, spawnNode: (args: string[]) => spawnTracked(t, process.execPath, args) });

test('the gRPC upstream answers Unary and Stream as asked and counts the Unary calls it answered', BOUNDED, async (t) => {
  const upstream = await startGrpcUpstream(t);
  const unary = await grpcCall(upstream, 'Unary', { name: 'x' });
  assert.deepEqual([unary.status, unary.grpcStatus, unary.replies], [200, 0, [{ message: 'hello bench' }]]);
  const stream = await grpcCall(upstream, 'Stream', { count: 7, size: 33 });
  assert.equal(stream.grpcStatus, 0);
  assert.deepEqual(stream.replies.map((r: { payload: Buffer }) => r.payload.length), Array(7).fill(33));
  await grpcCall(upstream, 'Unary', { name: 'y' });
  assert.deepEqual((await grpcCall(upstream, 'Served', {})).replies, [{ unary: 2 }]);
  assert.equal((await grpcCall(upstream, 'Stream', { count: -1, size: 1 })).grpcStatus, 3);
});

test("the sanity check passes the upstream's calls; an answer whose trailers were lost, or a refusal in the head, fails it", BOUNDED, async (t) => {
  const upstream = await startGrpcUpstream(t);
  await expectGrpc('upstream', `${upstream}${methodPath('Unary')}`, 'Unary');
  await expectGrpc('upstream', `${upstream}${methodPath('Stream')}`, 'Stream', { count: 100, size: 100 });
  const short = await fakeGrpcServer(t, (s) => streamReplies(s, 99, 100, '0'));
  await assert.rejects(expectGrpc('short', `${short}${methodPath('Stream')}`, 'Stream', { count: 100, size: 100 }), /grpc-status 0 in the trailers, 99 replies; expected/);

  const reply = frame(SERVICE.Unary.responseSerialize({ message: 'hello bench' }) as Buffer);
  const noTrailers = await fakeGrpcServer(t, (s) => {
    s.respond({ ':status': 200, 'content-type': 'application/grpc' });
    s.end(reply);
  });
  await assert.rejects(expectGrpc('no trailers', `${noTrailers}${methodPath('Unary')}`, 'Unary'), /answered 200, grpc-status null, 1 replies; expected/);
  const okInHead = await fakeGrpcServer(t, (s) => s.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '0' }, { endStream: true }));
  await assert.rejects(expectGrpc('trailers-only', `${okInHead}${methodPath('Unary')}`, 'Unary'), /grpc-status 0 in the head/);
});

test('streamed messages/s: every message of the upstream counted, whole calls timed, no error', BOUNDED, async (t) => {
  const upstream = await startGrpcUpstream(t);
  const r = await streamLoad(t, 200, 50)(`${upstream}${methodPath('Stream')}`, 1);
  assert.equal(r.errors, 0);
  assert.ok(r.requests >= 200, `a call of 200 finishes within a second: ${r.requests} messages`);
  assert.ok(r.p99Ms > 0 && r.p99Ms < 1000);
  assert.ok(Math.abs(r.rps - r.requests) < 1e-6 * r.requests, 'messages over one second');
});

test('a call that ends with grpc-status 13, or frames of another length than the reply, count as errors', BOUNDED, async (t) => {
  const failing = await fakeGrpcServer(t, (s) => streamReplies(s, 20, 10, '13'));
  const r = await streamLoad(t, 20, 10)(`${failing}${methodPath('Stream')}`, 1);
  assert.ok(r.requests >= 20, `the messages still counted: ${r.requests}`);
  assert.ok(r.errors > 0 && r.errors * 20 >= r.requests - 40, `every finished call an error: ${r.errors} of ${r.requests / 20}`);

  const cut = await fakeGrpcServer(t, (s) => streamReplies(s, 20, 10, '0', 1));
  const c = await streamLoad(t, 20, 10)(`${cut}${methodPath('Stream')}`, 1);
  assert.ok(c.errors >= c.requests, `each short frame an error: ${c.errors} for ${c.requests} messages`);
});

test('unary calls/s by h2load: a 200 the upstream did not answer (a gRPC error from in between) counts as an error', { ...BOUNDED, skip: !HAS_H2LOAD && 'h2load is not on PATH' }, async (t) => {
  const upstream = await startGrpcUpstream(t);
  const tmp = mkdtempSync(join(tmpdir(), 'bench-grpc-test-'));
  t.after(() => rmSync(tmp, { recursive: true, force: true }));
  const h2 = h2Load({ clients: 2, streams: 4, spawnH2load: (args: string[]) => spawnTracked(t, 'h2load', args), tmpDir: tmp });
  const load: Load = grpcUnaryLoad({ h2, upstreamUrl: upstream, tmpDir: tmp });

  const direct = await load(`${upstream}${methodPath('Unary')}`, 1);
  assert.ok(direct.requests > 100, `${direct.requests} calls`);
  assert.deepEqual([direct.non2xx, direct.errors, direct.grpcNotServed], [0, 0, 0]);

  // What a gateway's refusal looks like on the wire: HTTP 200, grpc-status in a head that ends the stream.
  const refusing = await fakeGrpcServer(t, (s) => s.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '14' }, { endStream: true }));
  const refused = await load(`${refusing}${methodPath('Unary')}`, 1);
  assert.ok(refused.requests > 100, `${refused.requests} calls`);
  assert.equal(refused.non2xx, 0, 'h2load alone sees only successes');
  assert.equal(refused.grpcNotServed, refused.answered2xx);
  assert.equal(refused.errors, refused.answered2xx);
});
