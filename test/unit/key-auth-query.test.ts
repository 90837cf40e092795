import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { keyAuth } from '../../src/steps/key-auth.js';
import { parseQuery } from '../../src/shared/url-query.js';
import type { Flow, StepEnv, StepReply } from '../../src/steps/step.js';
import { freshState } from '../../src/steps/step-state.js';

const sha = (k: string) => createHash('sha256').update(k).digest('hex');

function step(keepCredential: boolean) {
  return keyAuth.create!(
    { header: 'x-api-key', query: 'api_key', keys: [{ id: 'app', sha256: sha('good') }], consumerHeader: 'x-consumer-id', keepCredential } as never,
    { bucket: 'ka', tenant: 't', env: {} as StepEnv, state: freshState },
  );
}

/** A flow whose client sent `query` and `headers`; `upstreamQuery`: the query an earlier step left (default: the client's). */
function flowOf(query: string | null, headers: string[] = [], upstreamQuery: string | null = query) {
  const removed: string[] = [];
  const flow = {
    req: { query, queryPairs: parseQuery(query), headers, header: (n: string) => (headers.includes(n) ? headers[headers.indexOf(n) + 1] : undefined) },
    query: upstreamQuery,
    vars: {},
    setHeader() {},
    removeHeader: (n: string) => removed.push(n),
  } as unknown as Flow;
  return { flow, removed };
}

const status = (r: unknown) => (r as StepReply | undefined)?.status ?? 200;

test('key-auth reads the query the upstream will receive, so an earlier step cannot put an unchecked key there', () => {
  // The client sent the good key; an earlier step left another one in the upstream query.
  const { flow } = flowOf('api_key=good', [], 'api_key=other');
  assert.equal(status(step(true)(flow)), 401);
  const same = flowOf('x=1', [], 'x=1&api%5Fkey=good');
  assert.equal(status(step(false)(same.flow)), 200);
  assert.equal(same.flow.query, 'x=1', 'the pair it checked leaves the upstream query');
});

test('key-auth strips every pair an upstream could read as the key, and the header, unless kept', () => {
  const { flow, removed } = flowOf('a=1&API_KEY=good&b=2', ['x-api-key', 'good']);
  assert.equal(status(step(false)(flow)), 200);
  assert.equal(flow.query, 'a=1&b=2');
  assert.deepEqual(removed, ['x-api-key']);
  const kept = flowOf('a=1&API_KEY=good', ['x-api-key', 'good']);
  assert.equal(status(step(true)(kept.flow)), 200);
  assert.equal(kept.flow.query, 'a=1&API_KEY=good', 'kept as sent');
  assert.deepEqual(kept.removed, []);
});

test('key-auth refuses a key that comes twice: two header lines, header and query apart, a `;` in its pair', () => {
  const ambiguous = (r: unknown) => JSON.parse(String((r as StepReply).body)).code;
  assert.equal(ambiguous(step(false)(flowOf(null, ['x-api-key', 'good', 'x-api-key', 'other']).flow)), 'Svc.Data.AmbiguousCredential');
  assert.equal(ambiguous(step(false)(flowOf('api_key=other', ['x-api-key', 'good']).flow)), 'Svc.Data.AmbiguousCredential');
  assert.equal(ambiguous(step(false)(flowOf('api_key=good;x=1').flow)), 'Svc.Data.AmbiguousCredential');
  assert.equal(status(step(false)(flowOf('api_key=good', ['x-api-key', 'good']).flow)), 200, 'the same key in both places');
});
