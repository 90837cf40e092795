import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildPipeline } from '../../src/worker/pipeline.js';
import { BUILTINS } from '../../src/steps/registry.js';
import { StepStates, stepBuckets } from '../../src/worker/step-states.js';
import { RequestFlow } from '../../src/worker/flow.js';
import { TRIAL_BUCKET } from '../../src/steps/step-state.js';
import { compile } from '../../src/compiler/compile.js';
import type { CompiledGeneration, CompiledStep } from '../../src/contracts/generation.js';
import type { StepEnv, StepRequest } from '../../src/steps/step.js';

// The worker's StepStates: one object per step bucket, the same across builds while the
// bucket is unchanged, dropped once a served generation no longer has it.

const env: StepEnv = { rateLimits: { acquire: () => true, remaining: () => 1 }, traceId: () => 't', log: { info() {}, warn() {} } };
const SHA_OF_TEST = '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08'; // sha256('test')
const keyAuth = (bucket: string): CompiledStep => ({ kind: 'step', code: 'key-auth', settings: { header: 'x-api-key', keys: [{ id: 'ci', sha256: SHA_OF_TEST }], consumerHeader: 'x-consumer-id', keepCredential: false }, tenant: 'b', bucket });

function requestWithKey(key: string): StepRequest {
  const headers = ['x-api-key', key];
  return {
    ...{ method: 'GET', path: '/x', query: null, queryPairs: [], headers, remoteAddress: '127.0.0.1', clientAddress: '127.0.0.1', clientAddressTrusting: () => '127.0.0.1' },
    ...{ localPort: '', scheme: 'http', requestId: '', requestIdHeader: null, setRequestId: () => {}, cookie: () => undefined },
    header: (n: string) => (n === 'x-api-key' ? key : undefined),
    headerList: (n: string) => (n === 'x-api-key' ? key : undefined),
  } as StepRequest;
}

/** The consumer key-auth named for a request with the key `test`. */
async function consumerOf(states: StepStates, bucket: string): Promise<unknown> {
  const flow = new RequestFlow(requestWithKey('test'), null);
  assert.equal(await buildPipeline([keyAuth(bucket)], { env, registry: BUILTINS, states })!(flow), undefined, 'accepted');
  return flow.vars.consumer;
}

const kept = (states: StepStates, bucket: string) => states.of(bucket)(() => null);

test('key-auth\'s accepted-key memo is the same object for an unchanged bucket, and dropped with it', async () => {
  const states = new StepStates();
  const bucket = 'b/api#/steps/0@{…}';
  assert.equal(await consumerOf(states, bucket), 'ci');
  const memo = kept(states, bucket) as Map<string, string>;
  assert.ok(memo instanceof Map && memo.get('test') === 'ci', 'the accepted key is remembered in the store');
  // A rebuild (any publish) with the same bucket reads that memo: marked here, the mark is what it answers.
  memo.set('test', 'from-the-memo');
  assert.equal(await consumerOf(states, bucket), 'from-the-memo', 'the rebuilt step used the kept memo');
  assert.equal(kept(states, bucket), memo);
  // The served generation no longer has the bucket (the settings changed): dropped, the next build starts fresh.
  states.keepOnly(new Set(['b/api#/steps/0@{other}']));
  assert.equal(states.size, 0);
  assert.equal(await consumerOf(states, bucket), 'ci', 'a fresh memo');
  assert.notEqual(kept(states, bucket), memo);
});

test('the trial bucket never keeps state', () => {
  const states = new StepStates();
  let made = 0;
  states.of(TRIAL_BUCKET)(() => ++made);
  states.of(TRIAL_BUCKET)(() => ++made);
  assert.equal(made, 2);
  assert.equal(states.size, 0);
});

test('stepBuckets: every step of every tenant\'s cluster routes, group members included; a settings change is another bucket', () => {
  const gen = (ttl: number): CompiledGeneration => {
    const r = compile({
      tenant: 'default',
      published: [],
      drafts: [
        { kind: 'cluster', name: 'c', doc: { targets: ['127.0.0.1:1'] } },
        { kind: 'orch', name: 'g', doc: { nodes: [{ id: 'a', step: 'echo' }, { id: 'b', step: 'cors', settings: { origins: ['https://a.test'] } }], links: [], groups: [{ id: 'grp', nodes: ['a', 'b'], merge: 'any' }] } },
        { kind: 'route', name: 'r', doc: { cluster: 'c', steps: [{ code: 'cache', settings: { ttlSeconds: ttl } }, { code: 'orch', settings: { ref: 'g' } }] } },
      ],
    });
    assert.ok(r.ok, JSON.stringify(r.issues));
    return r.generation;
  };
  const one = stepBuckets(gen(30));
  assert.equal(one.size, 3, [...one].join('\n'));
  const two = stepBuckets(gen(60));
  const changed = [...two].filter((b) => !one.has(b));
  assert.equal(changed.length, 1, 'only the cache step changed');
  assert.match(changed[0]!, /^default\/r#\/steps\/0:cache@/);
});

test('another step in the same place with the same settings is another bucket: a step never gets the state of the one it replaced', () => {
  const bucketOf = (code: string) => {
    const r = compile({ tenant: 'default', published: [], drafts: [{ kind: 'cluster', name: 'c', doc: { targets: ['127.0.0.1:1'] } }, { kind: 'route', name: 'r', doc: { cluster: 'c', steps: [{ code }] } }] });
    assert.ok(r.ok, JSON.stringify(!r.ok && r.issues));
    const t = r.generation.tenants.default!.routes[0]!.terminal;
    return t.type === 'cluster' ? (t.steps[0] as { bucket: string }).bucket : '';
  };
  const [a, b] = [bucketOf('request-id'), bucketOf('access-log')];
  assert.notEqual(a, b);
  assert.match(a, /^default\/r#\/steps\/0:request-id@/);
  const states = new StepStates();
  states.of(a)(() => ({ mine: 'request-id' }));
  assert.deepEqual(states.of(b)(() => ({ mine: 'access-log' })), { mine: 'access-log' });
});
