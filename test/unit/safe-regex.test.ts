import { test } from 'node:test';
import assert from 'node:assert/strict';
import { repeatsARepetition } from '../../src/steps/safe-regex.js';

test('a group that repeats a repetition is found; ordinary patterns pass', () => {
  // Regression: `^/api/([a-z0-9]+)+/v1$` passed path-rewrite's schema, and a 33-byte path
  // then held a worker's event loop for 5.4 s.
  for (const bad of ['^/api/([a-z0-9]+)+/v1$', '(a*)*', '(\\w+x)*', '(a{2,})+', '((ab)+c)+', '(?:x+y?)+$', '(a+){2,}']) {
    assert.equal(repeatsARepetition(bad), true, bad);
  }
  for (const ok of ['^/regex/(\\w+)', '^/v1/(.*)$', '(ab)+', '(a|b)+', '[(+)]+', '\\(a+\\)+', '(a{2})+', 'bot|crawl|spider', '(?<name>crawler)', '^/a/(\\d+)/b/(\\d+)$']) {
    assert.equal(repeatsARepetition(ok), false, ok);
  }
});
