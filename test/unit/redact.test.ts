import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { REDACTED_TOKEN, Redactor, looksLikeToken } from '../../src/admin/redact.js';
import { newSubKey } from '../../src/admin/keys/key-format.js';

test('random secrets look like tokens; names, key ids and generations do not', () => {
  const b64 = Array.from({ length: 200 }, () => randomBytes(30).toString('base64url')).filter(looksLikeToken).length;
  assert.ok(b64 >= 198, `random 40-character base64url tokens: ${b64} of 200 recognised`);
  assert.ok(looksLikeToken(randomBytes(32).toString('hex').replace(/^[0-9]/, 'a')));
  for (const name of ['payments-api-v2-eu-west-1-canary', 'release-2026-11-27-build-1234', 'key_0123456789ABCDef', 'checkout', '123456789012345678901234567890', 'Orders.Service.Production']) {
    assert.equal(looksLikeToken(name), false, name);
  }
});

test('the redactor: known system tokens whatever their shape, sub-keys by shape, paths segment by segment', () => {
  const known = 'short-but-known';
  const r = new Redactor((s) => s === known);
  assert.equal(r.value(known), REDACTED_TOKEN);
  assert.equal(r.value(newSubKey()), '[redacted sub-key]');
  assert.equal(r.value('route-a'), 'route-a');
  assert.equal(r.path(`/api/v1/default/key/revoke/${known}`), `/api/v1/default/key/revoke/${REDACTED_TOKEN}`);
  assert.equal(r.path('/api/v1/default/key/revoke/short%2Dbut-known'), `/api/v1/default/key/revoke/${REDACTED_TOKEN}`, 'percent-encoded too');
  assert.equal(r.path('/api/v1/default/config/get/route/a%20b'), '/api/v1/default/config/get/route/a%20b');
  assert.deepEqual(r.params({ tenant: 'default', name: known }), { tenant: 'default', name: REDACTED_TOKEN });
  assert.ok(r.isBearerToken(known));
  assert.ok(r.isBearerToken(newSubKey()));
  assert.equal(r.isBearerToken(randomBytes(30).toString('base64url')), false, 'a mere shape is redacted, not refused');
});

test('a token with something around it is redacted too: Bearer <token>, a pasted line end, x.<token>', () => {
  // Regression: only a segment that was the token and nothing else was recognised.
  const token = randomBytes(30).toString('base64url');
  const r = new Redactor((s) => s === token);
  for (const v of [`Bearer ${token}`, `${token}\n`, `x.${token}`, `${token}.`, ` ${token} `]) assert.equal(r.value(v), REDACTED_TOKEN, JSON.stringify(v));
  assert.equal(r.path(`/api/v1/default/key/revoke/Bearer%20${token}`), `/api/v1/default/key/revoke/${REDACTED_TOKEN}`);
  assert.ok(r.isBearerToken(`x.${token}`), 'never stored as an entity name');
  assert.equal(r.value('orders.v2.production-eu'), 'orders.v2.production-eu');
});
