import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sendAgain, type FailedAttempt } from '../../src/worker/send-again.js';
import { failure } from '../helpers/upstream-errors.js';

/** A GET without a body, written on a reused connection that was closed before any answer, nothing tried yet. */
const stale: FailedAttempt = {
  err: failure('UND_ERR_SOCKET'),
  method: 'GET',
  replayable: true,
  written: true,
  answered: false,
  reused: true,
  resent: false,
  failedOver: false,
  otherTarget: true,
};
const refused: FailedAttempt = { ...stale, err: failure('ECONNREFUSED'), written: false, reused: false };
const f = (over: Partial<FailedAttempt>) => sendAgain({ ...stale, ...over });

test('a reused connection closed or reset before the answer: idempotent requests with a replayable body are re-sent once', () => {
  for (const code of ['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']) {
    for (const method of ['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE']) assert.equal(f({ err: failure(code), method }), 'resend', `${code} ${method}`);
  }
  assert.equal(f({ otherTarget: false }), 'resend', 'on the same target: a new connection');
});

test('never re-sent: POST and PATCH, a streamed body, an answer already begun, other errors', () => {
  assert.equal(f({ method: 'POST' }), null);
  assert.equal(f({ method: 'PATCH' }), null);
  assert.equal(f({ method: 'CONNECT' }), null);
  assert.equal(f({ method: 'PUT', replayable: false }), null, 'a body that already streamed');
  assert.equal(f({ answered: true }), null);
  for (const code of ['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_INVALID_ARG', 'UND_ERR_CLOSED', 'SY_UPSTREAM_CODING', 'HPE_INVALID_CONSTANT', undefined]) {
    assert.equal(f({ err: failure(code) }), null, String(code));
    assert.equal(sendAgain({ ...refused, err: failure(code) }), null, `${code}, not written`);
  }
});

test('a second close: after the one re-send, another target once; then nothing', () => {
  assert.equal(f({ resent: true }), 'failover');
  assert.equal(f({ resent: true, failedOver: true }), null);
  assert.equal(f({ resent: true, otherTarget: false }), null);
  assert.equal(f({ reused: false }), 'failover', 'a new connection closed under an idempotent request: another target');
  assert.equal(f({ reused: false, otherTarget: false }), null);
});

test('a connect failure: another target for every method and body, once, when the cluster has one', () => {
  for (const code of ['ECONNREFUSED', 'UND_ERR_CONNECT_TIMEOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND']) {
    for (const method of ['GET', 'POST', 'PATCH']) {
      assert.equal(sendAgain({ ...refused, err: failure(code), method }), 'failover', `${code} ${method}`);
      assert.equal(sendAgain({ ...refused, err: failure(code), method, replayable: false }), 'failover', `${code} ${method}, streamed body never read`);
    }
  }
  assert.equal(sendAgain({ ...refused, otherTarget: false }), null);
  assert.equal(sendAgain({ ...refused, failedOver: true }), null);
  assert.equal(sendAgain({ ...refused, resent: true }), 'failover', 'after a re-send, the new connection was refused');
});

test('closed before the request was written (nothing sent): another target for every method', () => {
  assert.equal(f({ written: false, method: 'POST', replayable: false }), 'failover');
  assert.equal(f({ written: false, otherTarget: false }), null);
});
