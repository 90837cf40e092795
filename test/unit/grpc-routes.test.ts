import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compile } from '../../src/compiler/compile.js';
import type { DraftRow } from '../../src/contracts/entities.js';

// A gRPC route's compile rules: an HTTP/2 cluster, no WebSocket, no read-ahead, no step that
// reads or rewrites a body (an orch chain's included); what compiles streams its bodies.

const h2c: DraftRow = { kind: 'cluster', name: 'g', doc: { targets: ['127.0.0.1:1'], protocol: 'h2c' } };
const h1: DraftRow = { kind: 'cluster', name: 'h', doc: { targets: ['127.0.0.1:2'] } };
const route = (name: string, doc: Record<string, unknown>): DraftRow => ({ kind: 'route', name, doc });
const run = (drafts: DraftRow[]) => compile({ tenant: 'default', published: [], drafts });
const grpcIssues = (r: ReturnType<typeof run>) => r.issues.filter((i) => i.code === 'Compile.Route.Grpc').map((i) => `${i.name} ${i.pointer}: ${i.message}`);

test('a gRPC route to an h2c cluster compiles, streams its bodies and says whether it takes gRPC-Web', () => {
  const r = run([h2c, route('rpc', { cluster: 'g', pathPrefix: '/a.B/', grpc: true, requestBuffering: { maxBytes: 0 }, steps: [{ code: 'key-auth', settings: { keys: [{ id: 'k', sha256: 'a'.repeat(64) }] } }] }), route('web', { cluster: 'g', pathPrefix: '/c.D/', grpc: { web: true } })]);
  assert.equal(r.ok, true, JSON.stringify(r.issues));
  if (!r.ok) return;
  const terminals = Object.fromEntries(r.generation.tenants.default!.routes.map((rt) => [rt.name, rt.terminal]));
  assert.deepEqual(terminals.rpc, { ...terminals.rpc, bufferBytes: 0, grpc: { web: false } });
  assert.deepEqual(terminals.web, { ...terminals.web, bufferBytes: 0, grpc: { web: true } });
});

test('what a gRPC route refuses: an HTTP/1.1 cluster, a WebSocket, read-ahead, body steps (inlined chains too), no cluster', () => {
  const r = run([
    h2c,
    h1,
    route('h1', { cluster: 'h', grpc: true }),
    route('ws', { cluster: 'g', grpc: true, websocket: true }),
    route('buffered', { cluster: 'g', grpc: true, requestBuffering: { maxBytes: 1024 } }),
    route('bodies', { cluster: 'g', grpc: true, steps: [{ code: 'body-validate', settings: { schema: { type: 'object' } } }, { code: 'compression', settings: {} }] }),
    { kind: 'orch', name: 'chain', doc: { nodes: [{ id: 'c', step: 'cache', settings: { ttlSeconds: 5 } }], links: [] } },
    route('chained', { cluster: 'g', grpc: true, steps: [{ code: 'orch', settings: { ref: 'chain' } }] }),
    route('fixed', { directResponse: { statusCode: 200 }, grpc: true }),
    route('split', { cluster: 'g', grpc: true, steps: [{ code: 'traffic-split', settings: { clusters: [{ cluster: 'h', weight: 1 }] } }] }),
  ]);
  const issues = grpcIssues(r);
  const has = (prefix: string, pattern: RegExp) => assert.ok(issues.some((i) => i.startsWith(prefix) && pattern.test(i)), `${prefix} ${pattern}\n${issues.join('\n')}`);
  has('h1 /grpc', /cluster h speaks http1\.1/);
  has('ws /websocket', /no WebSocket/);
  has('buffered /requestBuffering', /streams its bodies/);
  has('bodies /steps', /step body-validate reads the request body/);
  has('bodies /steps', /step compression rewrites the response body/);
  has('chained /steps', /step cache stores and replays whole response bodies/);
  has('fixed /grpc', /needs a cluster terminal/);
  has('split /steps', /traffic-split may send a call to cluster h, which speaks http1\.1/);
});
