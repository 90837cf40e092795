import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as v from 'valibot';
import { BUILTINS, BUILTIN_STEPS } from '../../src/steps/registry.js';
import { StepRegistry } from '../../src/steps/step-registry.js';
import { buildPipeline } from '../../src/worker/pipeline.js';
import { StepStates } from '../../src/worker/step-states.js';
import { RequestFlow } from '../../src/worker/flow.js';
import type { CompiledStep } from '../../src/contracts/generation.js';
import type { StepDefinition, StepEnv, StepReply, StepRequest } from '../../src/steps/step.js';

const request: StepRequest = {
  ...{ method: 'GET', path: '/x', query: null, headers: [], remoteAddress: '127.0.0.1', clientAddress: '127.0.0.1', clientAddressTrusting: () => '127.0.0.1' },
  ...{ localPort: '', scheme: 'http', requestId: '', requestIdHeader: null, setRequestId: () => {}, header: () => undefined, headerList: () => undefined },
};
const env: StepEnv = { rateLimits: { acquire: () => true, remaining: () => 1 }, traceId: () => 't', log: { info() {}, warn() {} } };
const step = (code: string, settings: unknown, extra: { continue?: true } = {}): CompiledStep => ({ kind: 'step', code, settings, tenant: 'default', bucket: `b-${code}`, ...extra });
const KEY_AUTH = step('key-auth', { header: 'x-api-key', keys: [{ id: 'k', sha256: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08' }] });
const IP_ONLY_TEN = step('ip-restriction', { allow: ['10.0.0.0/8'], deny: [], trustedProxies: [] });

async function answer(steps: CompiledStep[]): Promise<{ status: number; by: string | null }> {
  const flow = new RequestFlow(request, null);
  const r = (await buildPipeline(steps, { env, registry: BUILTINS, states: new StepStates() })!(flow)) as StepReply;
  return { status: r.status, by: flow.answeredBy };
}

test('the step_rejections label names the step whose answer the client got', async () => {
  assert.deepEqual(await answer([KEY_AUTH]), { status: 401, by: 'key-auth' });
  assert.deepEqual(await answer([IP_ONLY_TEN, KEY_AUTH]), { status: 403, by: 'ip-restriction' });
  assert.deepEqual(await answer([step('ip-restriction', { allow: ['10.0.0.0/8'], deny: [], trustedProxies: [] }, { continue: true }), KEY_AUTH]), { status: 401, by: 'key-auth' }, 'a refusal a Continue step swallowed is not the answer');
});

test('a group\'s answer is labelled by the member that decided it, not by the member that settled last', async () => {
  const any = (members: CompiledStep[][]): CompiledStep => ({ kind: 'group', id: 'g', merge: 'any', members });
  const all = (members: CompiledStep[][]): CompiledStep => ({ kind: 'group', id: 'g', merge: 'all', members });
  assert.deepEqual(await answer([any([[KEY_AUTH], [IP_ONLY_TEN]])]), { status: 401, by: 'key-auth' }, 'any, every member refused: the first member\'s refusal');
  assert.deepEqual(await answer([all([[KEY_AUTH], [step('echo', {})]])]), { status: 401, by: 'key-auth' }, 'all: the refusing member, though another answered after it');
});

test('a member of a group that throws is named by its own code, never by the step before the group', async () => {
  const boom: StepDefinition = { code: 'boom', summary: 'throws', statuses: [], example: {}, schema: v.object({}), create: () => () => Promise.reject(new Error('boom')) };
  const registry = new StepRegistry(new Map([...BUILTIN_STEPS, ['boom', boom]]));
  const flow = new RequestFlow(request, null);
  const steps: CompiledStep[] = [step('ip-restriction', { allow: ['127.0.0.0/8'], deny: [], trustedProxies: [] }), { kind: 'group', id: 'g', merge: 'all', members: [[step('boom', {})], [step('echo', {})]] }];
  await assert.rejects(Promise.resolve(buildPipeline(steps, { env, registry, states: new StepStates() })!(flow)), /boom/);
  assert.equal(flow.answeredBy, 'boom');
});
