import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildPipeline } from '../../src/worker/pipeline.js';
import { RequestFlow } from '../../src/worker/flow.js';
import { LAST, RUNNING, StepSites } from '../../src/worker/step-sites.js';
import type { CompiledStep } from '../../src/contracts/generation.js';
import type { StepEnv, StepRequest } from '../../src/steps/step.js';
import { BUILTINS } from '../../src/steps/registry.js';
import { StepStates } from '../../src/worker/step-states.js';

const env: StepEnv = { rateLimits: { acquire: () => true, remaining: () => 1 }, traceId: () => 't', log: { info() {}, warn() {} } };
const parts = { env, registry: BUILTINS, states: new StepStates() };
const step = (code: string, settings: unknown): CompiledStep => ({ kind: 'step', code, settings, tenant: 'acme', bucket: `b-${code}` });
const KEY_AUTH = step('key-auth', { header: 'x-api-key', keys: [{ id: 'k', sha256: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08' }] });
const IP_ALLOW = step('ip-restriction', { allow: ['127.0.0.0/8'], deny: [], trustedProxies: [] });

/** A request noting what the shared cell says when key-auth reads its headers (inside key-auth's run). */
function requestNoting(cell: Int32Array, seen: number[]): StepRequest {
  return {
    ...{ method: 'GET', path: '/x', query: null, remoteAddress: '127.0.0.1', clientAddress: '127.0.0.1', clientAddressTrusting: () => '127.0.0.1' },
    ...{ localPort: '', scheme: 'http', requestId: '', requestIdHeader: null, setRequestId: () => {}, header: () => undefined, headerList: () => undefined },
    get headers() {
      seen.push(cell[RUNNING]!);
      return [];
    },
  };
}

test('a pipeline writes the running step\'s site while its synchronous part runs, clears it after, and keeps the last started', async () => {
  const sites = new StepSites();
  const route = sites.forRoute('acme', 'api');
  const seen: number[] = [];
  const run = buildPipeline([IP_ALLOW, KEY_AUTH], { ...parts, sites: route })!;
  const added = new Map(sites.takeAdded());
  const idOf = (code: string): number => [...added].find(([, s]) => s.step === code)![0];
  assert.deepEqual(added.get(idOf('key-auth')), { tenant: 'acme', route: 'api', step: 'key-auth' });
  const flow = new RequestFlow(requestNoting(sites.cell, seen), null);
  await run(flow);
  assert.ok(seen.length > 0, 'key-auth read a header');
  assert.ok(seen.every((s) => s === idOf('key-auth')), `while key-auth ran the cell named it: ${seen}`);
  assert.equal(sites.cell[RUNNING], 0, 'no step runs after the pipeline returned');
  assert.equal(sites.cell[LAST], idOf('key-auth'), 'the last started is kept');

  // The same place in a later generation keeps its number: the thread is told nothing new.
  buildPipeline([IP_ALLOW, KEY_AUTH], { ...parts, sites: sites.forRoute('acme', 'api') });
  assert.deepEqual(sites.takeAdded(), []);
  buildPipeline([KEY_AUTH], { ...parts, sites: sites.forRoute('acme', 'other') });
  assert.deepEqual(sites.takeAdded().map(([, s]) => s), [{ tenant: 'acme', route: 'other', step: 'key-auth' }]);
});

test('inside a group, a member\'s step names itself while it runs; the group\'s caller gets its own value back', async () => {
  const sites = new StepSites();
  const seen: number[] = [];
  const group: CompiledStep = { kind: 'group', id: 'g', merge: 'all', members: [[KEY_AUTH], [IP_ALLOW]] };
  const run = buildPipeline([group], { ...parts, sites: sites.forRoute('acme', 'grouped') })!;
  const [[keyAuthId]] = sites.takeAdded().filter(([, s]) => s.step === 'key-auth');
  await run(new RequestFlow(requestNoting(sites.cell, seen), null));
  assert.ok(seen.length > 0 && seen.every((s) => s === keyAuthId), `${seen}`);
  assert.equal(sites.cell[RUNNING], 0);
});

test('without sites a pipeline records nothing (no watchdog)', async () => {
  const seen: number[] = [];
  const cell = new Int32Array(3);
  await buildPipeline([KEY_AUTH], parts)!(new RequestFlow(requestNoting(cell, seen), null));
  assert.ok(seen.every((s) => s === 0));
});
