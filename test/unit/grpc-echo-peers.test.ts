import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { connect } from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import { echoClient, HEADERS_FIRST, startEchoServer, streamPayload, unary, type EchoReply, type StreamSummary } from '../helpers/grpc.js';
import { makeCa } from '../helpers/tls-certs.js';

// The gRPC test peers themselves, client straight to server (no gateway): what the
// gateway's gRPC tests rely on them to do.

test('unary echoes message and payload, reports the metadata, and fails on purpose', async (t) => {
  const server = await startEchoServer(t);
  const client = echoClient(server.address);
  t.after(() => client.close());
  const payload = randomBytes(1000);
  const md = new grpc.Metadata();
  md.set('x-who', 'peer-test');
  const reply = await unary(client, { message: 'hi', payload }, md);
  assert.equal(reply.message, 'hi');
  assert.deepEqual(reply.payload, payload);
  assert.equal(reply.index, 0);
  assert.equal(JSON.parse(reply.metadata)['x-who'], 'peer-test');
  assert.equal(server.stats.lastMetadata?.['x-who'], 'peer-test');

  await assert.rejects(unary(client, { message: 'fail:5' }), (err: grpc.ServiceError) => {
    assert.equal(err.code, grpc.status.NOT_FOUND);
    assert.equal(err.details, 'failed on purpose');
    return true;
  });
  assert.deepEqual({ calls: server.stats.calls, completed: server.stats.completed, cancelled: server.stats.cancelled }, { calls: 2, completed: 2, cancelled: 0 });
});

test('server stream sends 100 replies in order with their deterministic payloads', async (t) => {
  const server = await startEchoServer(t);
  const client = echoClient(server.address);
  t.after(() => client.close());
  const replies: EchoReply[] = [];
  for await (const r of client.serverStream({ count: 100, size: 300 })) replies.push(r as EchoReply);
  assert.equal(replies.length, 100);
  replies.forEach((r, i) => {
    assert.equal(r.index, i);
    assert.deepEqual(r.payload, streamPayload(i, 300));
  });
  assert.notDeepEqual(streamPayload(0, 300), streamPayload(1, 300));
  assert.equal(server.stats.completed, 1);
});

test('client stream sums the count, bytes and sha256 of the payloads', async (t) => {
  const server = await startEchoServer(t);
  const client = echoClient(server.address);
  t.after(() => client.close());
  const parts = [randomBytes(10), randomBytes(70_000), Buffer.alloc(0), randomBytes(5)];
  const summary = await new Promise<StreamSummary>((resolve, reject) => {
    const call = client.clientStream((err, s) => (err ? reject(err) : resolve(s!)));
    for (const p of parts) call.write({ message: 'x', payload: p });
    call.end();
  });
  assert.deepEqual(summary, {
    count: 4,
    bytes: 70_015,
    sha256: createHash('sha256').update(Buffer.concat(parts)).digest('hex'),
  });
});

test('bidi echoes each request as it arrives, byte for byte, and ends when the client ends', async (t) => {
  const server = await startEchoServer(t);
  const client = echoClient(server.address);
  t.after(() => client.close());
  const call = client.bidi();
  const replies: EchoReply[] = [];
  const ended = new Promise<void>((resolve, reject) => call.on('end', resolve).on('error', reject));
  // One request at a time: the reply to each comes before the next is sent.
  const next = () => new Promise<EchoReply>((resolve) => call.once('data', resolve));
  for (let i = 0; i < 5; i++) {
    const payload = randomBytes(100 * i);
    call.write({ message: `m${i}`, payload });
    const r = await next();
    replies.push(r);
    assert.deepEqual([r.message, r.index, r.payload], [`m${i}`, i, payload]);
  }
  call.end();
  await ended;
  assert.equal(replies.length, 5);
  assert.equal(server.stats.completed, 1);
});

test('a unary call cancelled during its delay is counted as cancelled and never answered', async (t) => {
  const server = await startEchoServer(t);
  const client = echoClient(server.address);
  t.after(() => client.close());
  const seen: string[] = [];
  server.onCancelled.on('cancelled', (m: string) => seen.push(m));
  const call = client.unary({ message: 'slow', delayMs: 2000 }, (err) => {
    assert.equal(err?.code, grpc.status.CANCELLED);
  });
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(server.stats.calls, 1);
  call.cancel();
  await server.cancelledAt(1);
  assert.deepEqual(seen, ['Unary']);
  // The delay runs out after the cancel: still no answer, nothing completed.
  await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual({ cancelled: server.stats.cancelled, completed: server.stats.completed }, { cancelled: 1, completed: 0 });

  const stream = client.serverStream({ count: 1000, size: 10, intervalMs: 20 });
  stream.on('error', () => {});
  await new Promise((r) => stream.once('data', r));
  stream.cancel();
  await server.cancelledAt(2);
  assert.deepEqual(seen, ['Unary', 'ServerStream']);
});

test('over TLS, a client trusting the CA reaches the server', async (t) => {
  const ca = makeCa('grpc peers');
  const server = await startEchoServer(t, { tls: ca.issue('127.0.0.1', ['IP:127.0.0.1'], 'server') });
  const client = echoClient(server.address, { tls: { ca: ca.cert } });
  t.after(() => client.close());
  assert.equal((await unary(client, { message: 'secure' })).message, 'secure');
});

test('a failure comes trailers-only by default, and in trailers after the head when the call asks for the head first', async (t) => {
  const server = await startEchoServer(t);
  const session = connect(`http://${server.address}`);
  t.after(() => session.close());
  const msg = Buffer.from([0x0a, 6, ...Buffer.from('fail:5')]); // EchoRequest { message: 'fail:5' }
  const frame = Buffer.concat([Buffer.from([0, 0, 0, 0, msg.length]), msg]);
  const call = async (extra: Record<string, string>) => {
    const s = session.request({ ':method': 'POST', ':path': '/switchyard.test.Echo/Unary', 'content-type': 'application/grpc', te: 'trailers', ...extra });
    s.end(frame);
    const [head] = (await once(s, 'response')) as [Record<string, string>];
    const trailers = new Promise<Record<string, string> | null>((resolve) => {
      s.once('trailers', resolve);
      s.once('close', () => resolve(null));
    });
    s.resume();
    return { head, trailers: await trailers };
  };
  const only = await call({});
  assert.equal(only.head['grpc-status'], '5');
  assert.equal(only.trailers, null);
  const first = await call({ [HEADERS_FIRST]: '1' });
  assert.equal(first.head['grpc-status'], undefined);
  assert.equal(first.trailers?.['grpc-status'], '5');
  assert.equal(first.trailers?.['grpc-message'], 'failed%20on%20purpose');
});
