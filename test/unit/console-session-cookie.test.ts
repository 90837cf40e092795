import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CONSOLE_SESSION_COOKIE, withoutConsoleSession } from '../../src/shared/console-session-cookie.js';
import { SESSION_COOKIE } from '../../src/admin/oidc/console-cookies.js';

test('the console and the worker name the same session cookie', () => {
  assert.equal(SESSION_COOKIE, CONSOLE_SESSION_COOKIE);
});

test('the console session pair is removed from a Cookie header; the other pairs pass in order', () => {
  assert.equal(withoutConsoleSession('a=1; switchyard_session=x; b=2'), 'a=1; b=2');
  assert.equal(withoutConsoleSession('switchyard_session=x; b=2'), 'b=2');
  assert.equal(withoutConsoleSession('a=1;switchyard_session=x'), 'a=1');
  assert.equal(withoutConsoleSession(' switchyard_session = x ;a=1'), 'a=1', 'spaces around the name');
  assert.equal(withoutConsoleSession('switchyard_session=x; switchyard_session=y'), null, 'every copy, and nothing left is null');
  assert.equal(withoutConsoleSession('switchyard_session'), null, 'a pair without =');
});

test('cookies whose name or value only contain the session name are kept', () => {
  assert.equal(withoutConsoleSession('my_switchyard_session=1; b=switchyard_session'), 'my_switchyard_session=1; b=switchyard_session');
  assert.equal(withoutConsoleSession('Switchyard_Session=1'), 'Switchyard_Session=1', 'cookie names are case-sensitive');
});
