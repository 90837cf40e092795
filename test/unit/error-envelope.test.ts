import { test } from 'node:test';
import assert from 'node:assert/strict';
import { errorEnvelope, SvcError } from '../../src/shared/errors.js';
import { stepError, withTraceId } from '../../src/steps/reply.js';
import { rateLimit } from '../../src/steps/rate-limit.js';
import type { Flow, StepEnv, StepReply } from '../../src/steps/step.js';
import { freshState } from '../../src/steps/step-state.js';

test('errorEnvelope: code, message (the registry default unless given), traceId, then the extra fields', () => {
  assert.equal(JSON.stringify(errorEnvelope('Svc.Data.NoRoute', 't1')), '{"code":"Svc.Data.NoRoute","message":"No route matches the request","traceId":"t1"}');
  assert.equal(
    JSON.stringify(errorEnvelope('Svc.Auth.Scope', 't2', 'Missing scope config:write', { requiredScope: 'config:write' })),
    '{"code":"Svc.Auth.Scope","message":"Missing scope config:write","traceId":"t2","requiredScope":"config:write"}',
  );
  assert.deepEqual(new SvcError('Svc.Auth.Throttled', undefined, { retryAfter: 3 }).envelope('t3'), errorEnvelope('Svc.Auth.Throttled', 't3', undefined, { retryAfter: 3 }));
});

test('stepError: the registry status, headers kept; each request gets its own trace id where the envelope has it', () => {
  const r = stepError('Svc.Data.ConcurrencyLimited', 'More than 2 requests in flight on this route', { 'retry-after': '1' });
  assert.equal(r.status, 503);
  assert.deepEqual(r.headers, { 'content-type': 'application/json', 'retry-after': '1' });
  assert.equal(withTraceId(r, 'a1'), '{"code":"Svc.Data.ConcurrencyLimited","message":"More than 2 requests in flight on this route","traceId":"a1"}');
  assert.equal(withTraceId(r, 'b2'), '{"code":"Svc.Data.ConcurrencyLimited","message":"More than 2 requests in flight on this route","traceId":"b2"}');
  const invalid = stepError('Svc.Data.BodyInvalid', undefined, undefined, { violations: [] });
  assert.equal(withTraceId(invalid, 't'), JSON.stringify(errorEnvelope('Svc.Data.BodyInvalid', 't', undefined, { violations: [] })));
  assert.equal(withTraceId({ status: 200, body: '{"ok":true}' }, 't'), '{"ok":true}', 'an answer that is not a stepError envelope is sent as is');
});

test('the rate-limit 429 carries the trace id it is sent with (the request\'s id), not one of its own', async () => {
  const env = { rateLimits: { acquire: () => ({ ok: false, retryAfterSeconds: 1.2 }), remaining: () => 0 }, traceId: () => 'trace-1', log: { info() {}, warn() {} } } as unknown as StepEnv;
  const run = rateLimit.create!({ requestsPerSecond: 1, burst: 1, key: 'route', headers: false } as never, { bucket: 'b', tenant: 't', env, state: freshState });
  const r = (await run({} as Flow)) as StepReply;
  assert.equal(r.status, 429);
  assert.deepEqual(JSON.parse(String(withTraceId(r, 'w0-req-7'))), { code: 'Svc.Data.RateLimited', message: 'Rate limit exceeded', traceId: 'w0-req-7', retryAfter: 2 });
});
