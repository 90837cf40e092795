import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CONSOLE_COOKIE_PREFIX, CONSOLE_SESSION_COOKIE, CONSOLE_SIGN_IN_COOKIE, withoutConsoleSession } from '../../src/shared/console-session-cookie.js';
import { SESSION_COOKIE, SIGN_IN_COOKIE } from '../../src/admin/oidc/console-cookies.js';

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

test('the console sign-in cookie (state, nonce, PKCE verifier) is removed too; the hot-path check covers both names', () => {
  assert.equal(SIGN_IN_COOKIE, CONSOLE_SIGN_IN_COOKIE);
  for (const name of [CONSOLE_SESSION_COOKIE, CONSOLE_SIGN_IN_COOKIE]) assert.ok(name.startsWith(CONSOLE_COOKIE_PREFIX));
  assert.equal(withoutConsoleSession('a=1; switchyard_oidc=st.nonce.verifier; b=2'), 'a=1; b=2');
  assert.equal(withoutConsoleSession('switchyard_oidc=x; switchyard_session=y'), null);
  assert.equal(withoutConsoleSession('switchyard_other=1; my_switchyard_oidc=2'), 'switchyard_other=1; my_switchyard_oidc=2', 'other names kept');
});
