import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, scryptSync } from 'node:crypto';
import { basicAuth } from '../../src/steps/basic-auth.js';
import type { Flow, StepEnv } from '../../src/steps/step.js';
import { freshState } from '../../src/steps/step-state.js';

function scryptHash(password: string): string {
  const salt = randomBytes(16);
  const hash = scryptSync(password, salt, 32, { N: 1024, r: 8, p: 1 });
  return `scrypt$1024$8$1$${salt.toString('base64')}$${hash.toString('base64')}`;
}

/** basic-auth reads the Authorization header and, on success, edits headers and vars. */
function flowWith(user: string, password: string): Flow {
  const auth = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  return {
    req: { header: (n: string) => (n === 'authorization' ? auth : undefined) },
    vars: {},
    setHeader() {},
    removeHeader() {},
  } as unknown as Flow;
}

const status = (o: unknown) => (o as { status?: number } | undefined)?.status;
const isPromise = (o: unknown) => typeof (o as { then?: unknown } | undefined)?.then === 'function';

test('basic-auth: an unknown user pays the same scrypt as a wrong password (no fast refusal that tells user names apart)', async () => {
  // Regression: an unknown user name was refused at once, a known one only after scrypt,
  // so the answer's timing told which user names exist.
  const run = basicAuth.create!(
    { realm: 'r', users: [{ username: 'alice', scrypt: scryptHash('right') }], consumerHeader: 'x-consumer-id', cacheSeconds: 0 },
    { bucket: 'ba', tenant: 't', env: {} as StepEnv, state: freshState },
  );
  const wrongPassword = run(flowWith('alice', 'wrong'));
  const unknownUser = run(flowWith('mallory', 'wrong'));
  assert.ok(isPromise(wrongPassword), 'a wrong password is judged after scrypt');
  assert.ok(isPromise(unknownUser), 'an unknown user is judged after scrypt too');
  assert.equal(status(await wrongPassword), 401);
  assert.equal(status(await unknownUser), 401);
  // The decoy never lets anyone in, whatever the password.
  assert.equal(status(await run(flowWith('mallory', ''))), 401);
  assert.equal(status(await run(flowWith('alice', 'right'))), undefined, 'the right password passes');
});
