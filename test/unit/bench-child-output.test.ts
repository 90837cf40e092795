import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';
import { spawn } from 'node:child_process';
// @ts-expect-error: the bench is plain JavaScript without type declarations
import { childOutput } from '../../bench/child-output.mjs';

type Result = { code: number | null; signal: string | null; out: string; err: string };

test("a child's report that is read after its 'exit' is kept: the output is taken on 'close'", async () => {
  const child = Object.assign(new EventEmitter(), { stdout: new PassThrough(), stderr: new PassThrough() });
  const done = childOutput(child) as Promise<Result>;
  // As Node may order them: the process is gone before its last output was read.
  child.emit('exit', 0, null);
  child.stdout.end('Requests/sec: 12345.67\n');
  child.stderr.end('a warning\n');
  await new Promise((r) => setImmediate(r));
  child.emit('close', 0, null);
  assert.deepEqual(await done, { code: 0, signal: null, out: 'Requests/sec: 12345.67\n', err: 'a warning\n' });
});

test('a real child: all of a large output, its exit code, and the tail of its stderr', async () => {
  const script = "process.stdout.write('x'.repeat(1 << 20)); process.stderr.write('e'.repeat(10000) + 'END'); process.exitCode = 3;";
  const r = (await childOutput(spawn(process.execPath, ['-e', script]), 100)) as Result;
  assert.equal(r.code, 3);
  assert.equal(r.out.length, 1 << 20);
  assert.equal(r.err.length, 100);
  assert.ok(r.err.endsWith('END'));
});
