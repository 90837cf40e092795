import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GrpcWebTextEncoder } from '../../src/worker/grpc/grpc-web-text-encoder.js';
import { GrpcFrameBoundaries } from '../../src/worker/grpc/grpc-frame-boundaries.js';
import { decodeBase64Groups } from '../../src/worker/grpc/grpc-web-text-decoder.js';
import { trailerFrame } from '../../src/worker/grpc/grpc-web-trailers.js';

const frame = (flag: number, message: Buffer) => {
  const f = Buffer.alloc(5 + message.length);
  f[0] = flag;
  f.writeUInt32BE(message.length, 1);
  message.copy(f, 5);
  return f;
};

// Frames of lengths 5+7, 5+0 (empty message), 5+300, 5+1: ends at offsets not multiples of 3.
const frames = [frame(0, Buffer.alloc(7, 1)), frame(0, Buffer.alloc(0)), frame(0, Buffer.from(Array.from({ length: 300 }, (_, i) => i & 0xff))), frame(0, Buffer.from('z'))];
const body = Buffer.concat(frames);
const ends = frames.reduce<number[]>((acc, f) => [...acc, (acc.at(-1) ?? 0) + f.length], []);

test('frame boundaries: the last frame end in each chunk, across any split', () => {
  for (let i = 0; i <= body.length; i++) {
    const b = new GrpcFrameBoundaries();
    const first = b.lastEnd(body.subarray(0, i));
    const second = b.lastEnd(body.subarray(i));
    const inFirst = ends.filter((e) => e <= i && e > 0);
    const inSecond = ends.filter((e) => e > i);
    assert.equal(first, inFirst.length ? inFirst.at(-1)! : -1, `first part of split ${i}`);
    assert.equal(second, inSecond.length ? inSecond.at(-1)! - i : -1, `second part of split ${i}`);
  }
  // a length past 2^31 is read as a number, not a negative one
  const b = new GrpcFrameBoundaries();
  assert.equal(b.lastEnd(Buffer.from([0, 0xff, 0xff, 0xff, 0xff, 1, 2])), -1);
});

test('text encoding: the same bytes whatever the chunk splits; padding only where a frame ends', () => {
  for (let i = 0; i <= body.length; i++) {
    for (const j of [i, Math.min(body.length, i + 1), Math.min(body.length, i + 2), Math.min(body.length, i + 50)]) {
      const enc = new GrpcWebTextEncoder();
      const pieces = [enc.encode(body.subarray(0, i)), enc.encode(body.subarray(i, j)), enc.encode(body.subarray(j)), enc.end()];
      const text = pieces.join('');
      assert.deepEqual(decodeBase64Groups(text), body, `splits ${i}, ${j}`);
      for (const p of pieces) assert.equal(p.length % 4, 0, 'each piece is whole groups of four');
      // Padding marks a frame's end only: decoding up to each padded group ends exactly on a frame boundary.
      for (let g = 0; g < text.length; g += 4) {
        if (text[g + 3] !== '=') continue;
        const decodedLength = decodeBase64Groups(text.slice(0, g + 4)).length;
        assert.ok(ends.includes(decodedLength), `padding in the group at ${g} ends a frame (${decodedLength} bytes), splits ${i}, ${j}`);
      }
    }
  }
});

test('text encoding: a message whole in one chunk goes out whole at once, nothing held for the next', () => {
  const enc = new GrpcWebTextEncoder();
  for (const f of frames) {
    const out = enc.encode(f);
    assert.deepEqual(decodeBase64Groups(out), f);
  }
  assert.equal(enc.end(), '');
});

test('text encoding: inside a frame at most 2 bytes wait, and end() gives them padded', () => {
  const enc = new GrpcWebTextEncoder();
  const big = frames[2]!;
  assert.deepEqual(decodeBase64Groups(enc.encode(big.subarray(0, 3))), big.subarray(0, 3));
  assert.equal(enc.encode(big.subarray(3, 5)), '', 'two bytes of a frame: held');
  assert.deepEqual(decodeBase64Groups(enc.encode(big.subarray(5, 6))), big.subarray(3, 6), 'a third byte: the group goes');
  assert.deepEqual(decodeBase64Groups(enc.encode(big.subarray(6, 10))), big.subarray(6, 9));
  assert.equal(enc.end(), big.subarray(9, 10).toString('base64'));
  assert.match(big.subarray(9, 10).toString('base64'), /==$/);
});

test('trailer frame bytes: 0x80, the block\'s 4-byte big-endian length, name:value\\r\\n lines with lower-case names', () => {
  const f = trailerFrame(['Grpc-Status', '0', 'grpc-message', 'all%20good', Buffer.from('X-Extra'), Buffer.from('v\xe9', 'latin1')]);
  const block = 'grpc-status:0\r\ngrpc-message:all%20good\r\nx-extra:v\xe9\r\n';
  assert.deepEqual(f, Buffer.concat([Buffer.from([0x80, 0, 0, 0, block.length]), Buffer.from(block, 'latin1')]));
  assert.deepEqual(trailerFrame([]), Buffer.from([0x80, 0, 0, 0, 0]));
  const long = trailerFrame(['x', 'y'.repeat(70_000)]);
  assert.equal(long.readUInt32BE(1), 70_004);
});
