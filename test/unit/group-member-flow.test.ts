import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RequestFlow } from '../../src/worker/flow.js';
import { BUILTINS } from '../../src/steps/registry.js';
import { buildPipeline } from '../../src/worker/pipeline.js';
import { StepStates } from '../../src/worker/step-states.js';
import { compile } from '../../src/compiler/compile.js';
import type { StepEnv, StepRequest } from '../../src/steps/step.js';
import type { CompiledStep } from '../../src/contracts/generation.js';

function requestOf(headers: string[]): StepRequest {
  const header = (n: string) => {
    for (let i = 0; i < headers.length; i += 2) if (headers[i] === n) return headers[i + 1];
    return undefined;
  };
  return { method: 'GET', path: '/x', query: null, headers, remoteAddress: '127.0.0.1', clientAddress: '127.0.0.1', clientAddressTrusting: () => '127.0.0.1', localPort: '', scheme: 'http', requestId: '', requestIdHeader: null, setRequestId: () => {}, header, headerList: header };
}
const env: StepEnv = { rateLimits: { acquire: () => true, remaining: () => 1 }, traceId: () => 't', log: { info() {}, warn() {} } };

/** The compiled steps of a route bound to orch `o`, with orch `inner` beside it. */
function stepsOf(inner: unknown, o: unknown): CompiledStep[] {
  const r = compile({
    tenant: 'default',
    published: [],
    drafts: [
      { kind: 'cluster', name: 'c', doc: { targets: ['127.0.0.1:1'] } },
      { kind: 'orch', name: 'inner', doc: inner },
      { kind: 'orch', name: 'o', doc: o },
      { kind: 'route', name: 'r', doc: { cluster: 'c', steps: [{ code: 'orch', settings: { ref: 'o' } }] } },
    ],
  });
  assert.equal(r.ok, true, JSON.stringify(r.issues));
  if (!r.ok) throw new Error('not compiled');
  const t = r.generation.tenants.default!.routes[0]!.terminal;
  if (t.type !== 'cluster') throw new Error('not a cluster route');
  return t.steps;
}

test('a chain inside a group member sees its own earlier edits, as it does outside a group', async () => {
  // Regression: a member's preview was the request's, without the member's own edits, so
  // `request-headers` then `echo` inside a group did not show the header it had just set.
  const inner = {
    nodes: [
      { id: 'h', step: 'request-headers', settings: { set: { 'x-a': '1' }, remove: ['x-drop'] } },
      { id: 'p', step: 'path-rewrite', settings: { stripPrefix: '/x' } },
      { id: 'e', step: 'echo', settings: {} },
    ],
    links: [{ from: 'h', to: 'p' }, { from: 'p', to: 'e' }],
  };
  const plain = stepsOf(inner, { nodes: [{ id: 'm', step: 'orch', settings: { ref: 'inner' } }], links: [] });
  const grouped = stepsOf(inner, { nodes: [{ id: 'm', step: 'orch', settings: { ref: 'inner' } }], links: [], groups: [{ id: 'g', nodes: ['m'], merge: 'all' }] });
  const seen = async (steps: CompiledStep[]) => {
    const out = (await buildPipeline(steps, { env, registry: BUILTINS, states: new StepStates() })!(new RequestFlow(requestOf(['x-drop', 'gone', 'x-keep', 'kept']), null))) as { body: string };
    const echoed = JSON.parse(out.body);
    return { path: echoed.path, headers: Object.fromEntries(echoed.headers) };
  };
  // The preview is what the proxy would send: X-Forwarded-* from the socket included.
  const expected = { path: '/', headers: { 'x-keep': 'kept', 'x-forwarded-for': '127.0.0.1', 'x-forwarded-proto': 'http', 'x-a': '1' } };
  assert.deepEqual(await seen(plain), expected);
  assert.deepEqual(await seen(grouped), expected);
});
