import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { grpcWebRequestBody, grpcWebUpstreamHeaders } from '../../src/worker/grpc/grpc-web-request.js';
import { decodeGrpcWebText, GrpcWebTextError } from '../../src/worker/grpc/grpc-web-text-decoder.js';

/** A gRPC frame: flag 0, 4-byte big-endian length, the message. */
const frame = (message: Buffer) => Buffer.concat([Buffer.from([0, 0, 0, 0, message.length]), message]);

/** Two frames base64-encoded one by one, as a gRPC-Web text client may send them: padding inside the body. */
const one = frame(Buffer.from('a first message'));
const two = frame(Buffer.from('the second, of another length'));
const binary = Buffer.concat([one, two]);
const text = one.toString('base64') + two.toString('base64');

async function collect(stream: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of stream) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

test('upstream headers: content-type to application/grpc, no content-length, x-grpc-web or te (proxy.ts puts te: trailers first for every gRPC call); the rest in order', () => {
  const client = [
    'x-forwarded-for', '10.0.0.1',
    'content-type', 'application/grpc-web-text+proto',
    'content-length', '123',
    'x-grpc-web', '1',
    'accept', 'application/grpc-web-text',
    'x-user-agent', 'grpc-web-javascript/0.1',
    'grpc-timeout', '5S',
  ];
  assert.deepEqual(grpcWebUpstreamHeaders(client, 'text'), [
    'x-forwarded-for', '10.0.0.1',
    'content-type', 'application/grpc+proto',
    'accept', 'application/grpc-web-text',
    'x-user-agent', 'grpc-web-javascript/0.1',
    'grpc-timeout', '5S',
  ]);
  assert.deepEqual(grpcWebUpstreamHeaders(['content-type', 'application/grpc-web', 'te', 'gzip', 'traceparent', 'p'], 'binary'), ['content-type', 'application/grpc', 'traceparent', 'p'], 'the traceparent stays last');
});

test('a binary body goes up as it is, Buffer or stream (the same object)', () => {
  const stream = Readable.from([binary]);
  assert.equal(grpcWebRequestBody(binary, 'binary'), binary);
  assert.equal(grpcWebRequestBody(stream, 'binary'), stream);
  assert.equal(grpcWebRequestBody(null, 'text'), null);
});

test('a text body read whole is decoded, separately padded segments included', () => {
  assert.notEqual(one.length % 3, 0, 'the first segment must end padded for this test to mean anything');
  assert.match(text.slice(0, -4), /=[A-Za-z0-9+/]/, 'padding inside the body');
  assert.deepEqual(grpcWebRequestBody(Buffer.from(text), 'text'), binary);
});

test('a streamed text body decodes the same whatever the chunk splits: every one split and every two', async () => {
  const body = Buffer.from(text);
  for (let i = 0; i <= body.length; i++) {
    const got = await collect(grpcWebRequestBody(Readable.from([body.subarray(0, i), body.subarray(i)]), 'text'));
    assert.deepEqual(got, binary, `split at ${i}`);
  }
  for (let i = 1; i < body.length; i += 1) {
    for (let j = i + 1; j < body.length; j += 3) {
      const got = await collect(grpcWebRequestBody(Readable.from([body.subarray(0, i), body.subarray(i, j), body.subarray(j)]), 'text'));
      assert.deepEqual(got, binary, `splits at ${i} and ${j}`);
    }
  }
  // one byte at a time
  const bytes = [...body].map((b) => Buffer.from([b]));
  assert.deepEqual(await collect(grpcWebRequestBody(Readable.from(bytes), 'text')), binary);
});

test('an invalid text body fails: bad characters, padding inside a group, a length not a multiple of 4', async () => {
  const bad = [`${text.slice(0, 8)}*${text.slice(9)}`, `QQ=A${text}`, `Q===${text}`, `${text}QUI`, 'QUJD\u00e9\u00e9\u00e9\u00e9'];
  for (const b of bad) {
    assert.throws(() => decodeGrpcWebText(Buffer.from(b, 'latin1')), GrpcWebTextError, b);
    const stream = grpcWebRequestBody(Readable.from([Buffer.from(b, 'latin1')]), 'text');
    await assert.rejects(collect(stream), GrpcWebTextError, b);
  }
});

test('a failing text stream stops the client body it reads', async () => {
  const source = new Readable({ read() {} });
  const decoded = grpcWebRequestBody(source, 'text');
  source.push(Buffer.from('QUJD'));
  source.push(Buffer.from('!!!!'));
  await assert.rejects(collect(decoded), GrpcWebTextError);
  assert.equal(source.destroyed, true);
});
