import { test } from 'node:test';
import assert from 'node:assert/strict';
import { redactQuery } from '../../src/shared/redact-query.js';
import type { QueryPair } from '../../src/shared/url-query.js';

test('access-log redacts credential-looking query values between & and ; alike, and keeps the separators', () => {
  // Regression: only `&` separated pairs, so `…;api_key=SECRET` (read as a pair by Rack and
  // older Python and Go servers) reached the log in plaintext.
  const secret = (p: QueryPair) => /key|token/i.test(p.name);
  assert.equal(redactQuery('token=abc&lang=en;api_key=SECRET123', secret), 'token=[redacted]&lang=en;api_key=[redacted]');
  assert.equal(redactQuery('a=1;;b=2&&c', secret), 'a=1;;b=2&&c');
});
