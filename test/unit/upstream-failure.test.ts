import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connectFailed, connectionClosed, errorCode, retriable } from '../../src/worker/upstream-failure.js';
import { failure } from '../helpers/upstream-errors.js';

test('each upstream failure before the head answers its registry code', () => {
  const expected: [string | undefined, string][] = [
    ['UND_ERR_INVALID_ARG', 'Svc.Data.BadRequest'],
    ['SY_UPSTREAM_BUSY', 'Svc.Data.UpstreamBusy'],
    ['SY_UPSTREAM_DENIED', 'Svc.Data.UpstreamDenied'],
    ['UND_ERR_HEADERS_TIMEOUT', 'Svc.Data.UpstreamTimeout'],
    ['UND_ERR_CONNECT_TIMEOUT', 'Svc.Data.UpstreamTimeout'],
    ['UND_ERR_BODY_TIMEOUT', 'Svc.Data.UpstreamTimeout'],
    ['HPE_INVALID_CONSTANT', 'Svc.Data.UpstreamInvalid'],
    ['UND_ERR_RES_CONTENT_LENGTH_MISMATCH', 'Svc.Data.UpstreamInvalid'],
    ['SY_UPSTREAM_CODING', 'Svc.Data.UpstreamInvalid'],
    ['ECONNREFUSED', 'Svc.Data.UpstreamUnreachable'],
    ['ECONNRESET', 'Svc.Data.UpstreamUnreachable'],
    ['UND_ERR_SOCKET', 'Svc.Data.UpstreamUnreachable'],
    ['ENOTFOUND', 'Svc.Data.UpstreamUnreachable'],
    [undefined, 'Svc.Data.UpstreamUnreachable'],
  ];
  for (const [code, answer] of expected) assert.equal(errorCode(failure(code)), answer, String(code));
});

test('an llhttp refusal whose code undici left unset is still an invalid answer', () => {
  assert.equal(errorCode(failure('HPE_')), 'Svc.Data.UpstreamInvalid');
});

test('retriable: refused, reset, closed, connect or header timeout, busy; nothing else', () => {
  for (const code of ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_SOCKET', 'UND_ERR_HEADERS_TIMEOUT', 'SY_UPSTREAM_BUSY']) {
    assert.equal(retriable(failure(code)), true, code);
  }
  for (const code of ['UND_ERR_BODY_TIMEOUT', 'UND_ERR_INVALID_ARG', 'SY_UPSTREAM_DENIED', 'SY_UPSTREAM_CODING', 'HPE_INVALID_CONSTANT', 'ENOTFOUND', undefined]) {
    assert.equal(retriable(failure(code)), false, String(code));
  }
});

test('connect failures and closed connections are told apart', () => {
  for (const code of ['ECONNREFUSED', 'UND_ERR_CONNECT_TIMEOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'SY_UPSTREAM_DENIED']) {
    assert.equal(connectFailed(failure(code)), true, code);
    assert.equal(connectionClosed(failure(code)), false, code);
  }
  for (const code of ['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']) {
    assert.equal(connectionClosed(failure(code)), true, code);
    assert.equal(connectFailed(failure(code)), false, code);
  }
  assert.equal(connectFailed(failure('SY_UPSTREAM_BUSY')), false, 'busy: no connection was asked for');
});
