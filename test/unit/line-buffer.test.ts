import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LineBuffer, jsonText } from '../../src/worker/observe/line-buffer.js';

/** A LineBuffer of `size` bytes whose handed chunks are kept, each copied when handed and checked unchanged later. */
function collecting(size: number) {
  const handed: { bytes: Buffer; copy: Buffer }[] = [];
  const out = new LineBuffer(size, (bytes) => handed.push({ bytes, copy: Buffer.from(bytes) }));
  const text = () => {
    out.hand();
    for (const h of handed) assert.ok(h.bytes.equals(h.copy), 'a handed buffer is never written again');
    return Buffer.concat(handed.map((h) => h.bytes)).toString('utf8');
  };
  return { out, handed, text };
}

test('numbers read as String(n) would write them, and NaN and the infinities as null', () => {
  const samples = [0, 1, 9, 10, 99, 100, 200, 404, 65_535, 0x3fffffff, 0x40000000, 2 ** 40, Number.MAX_SAFE_INTEGER, -1, -0.5, 1.5, 1e21, 123.456];
  for (let i = 0; i < 2000; i++) samples.push(Math.floor(Math.random() * 2 ** Math.floor(Math.random() * 31)));
  for (const n of samples) {
    const { out, text } = collecting(64);
    out.number(n);
    assert.equal(text(), String(n), `number ${n}`);
  }
  for (const n of [null, NaN, Infinity, -Infinity]) {
    const { out, text } = collecting(64);
    out.number(n);
    assert.equal(text(), 'null');
  }
});

test('digits are zero-padded to a width', () => {
  for (const [n, width, want] of [[7, 3, '007'], [45, 3, '045'], [999, 3, '999'], [0, 3, '000'], [1234, 3, '1234']] as const) {
    const { out, text } = collecting(16);
    out.digits(n, width);
    assert.equal(text(), want);
  }
});

test('quoted values stay as they are, non-ASCII ones as UTF-8; JSON strings escape anything but printable ASCII', () => {
  const { out, text } = collecting(256);
  out.quoted('10.0.0.1');
  out.quoted('bücher-route');
  out.quoted('');
  out.json('plain text ~!');
  out.json('a"b\\c\n\u2028é\u0000');
  assert.equal(text(), `"10.0.0.1""bücher-route"null"plain text ~!"${jsonText('a"b\\c\n\u2028é\u0000')}`);
  assert.equal(jsonText('\u2028\u0085'), '"\\u2028\\u0085"', 'Unicode line breaks are escaped, not left raw');
});

test('lines spanning many buffers arrive whole and in order; a line longer than a buffer gets one of its own', () => {
  const { out, handed, text } = collecting(100);
  let want = '';
  for (let i = 0; i < 500; i++) {
    const s = i % 97 === 0 ? 'x'.repeat(300) : `line ${i} é`;
    out.reserve(6 * s.length + 2);
    out.json(s);
    out.byte(0x0a);
    want += `${JSON.stringify(s)}\n`;
  }
  assert.equal(text(), want);
  assert.ok(handed.length > 50, `handed in many writes (${handed.length})`);
  for (const h of handed) assert.ok(h.bytes.length <= 100 || h.bytes.toString().startsWith('"xxx'), 'only the long lines exceed the buffer size');
  for (const h of handed) assert.ok(h.bytes.toString().endsWith('\n'), 'a write holds whole lines');
});
