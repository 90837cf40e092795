import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compile } from '../../src/compiler/compile.js';
import type { DraftRow } from '../../src/contracts/entities.js';

/** A cluster's `protocol` as the compiler reads it: what it compiles to, and the issues it refuses with. */

const cluster = (name: string, doc: Record<string, unknown>): DraftRow => ({ kind: 'cluster', name, doc });
const route = (name: string, doc: Record<string, unknown>): DraftRow => ({ kind: 'route', name, doc });
const run = (drafts: DraftRow[]) => compile({ tenant: 'default', published: [], drafts });
const issues = (r: ReturnType<typeof run>) => r.issues.map((i) => `${i.kind}/${i.name} ${i.pointer} ${i.code}`);

test('protocol compiles to the generation: h2 and h2c kept, http1.1 and absent leave the field out (stored generations read the same)', () => {
  const r = run([
    cluster('tls', { targets: ['https://127.0.0.1:1'], protocol: 'h2' }),
    cluster('plain', { targets: ['127.0.0.1:1', 'http://127.0.0.1:2'], protocol: 'h2c' }),
    cluster('one', { targets: ['127.0.0.1:1'], protocol: 'http1.1' }),
    cluster('old', { targets: ['127.0.0.1:1'] }),
    ...['tls', 'plain', 'one', 'old'].map((c) => route(c, { cluster: c, pathPrefix: `/${c}` })),
  ]);
  assert.equal(r.ok, true, JSON.stringify(r.issues));
  if (!r.ok) return;
  const c = r.generation.clusters;
  assert.equal(c['default/tls']!.protocol, 'h2');
  assert.equal(c['default/plain']!.protocol, 'h2c');
  assert.equal('protocol' in c['default/one']!, false);
  assert.equal('protocol' in c['default/old']!, false);
});

test('h2 needs every target https://, h2c none: one issue per target that does not fit, with its pointer', () => {
  const r = run([
    cluster('h2', { targets: ['https://127.0.0.1:1', '127.0.0.1:2', { address: 'http://127.0.0.1:3', weight: 2 }], protocol: 'h2' }),
    cluster('h2c', { targets: ['127.0.0.1:1', 'https://127.0.0.1:2'], protocol: 'h2c' }),
    route('a', { cluster: 'h2', pathPrefix: '/a' }),
    route('b', { cluster: 'h2c', pathPrefix: '/b' }),
  ]);
  assert.equal(r.ok, false);
  assert.deepEqual(issues(r), [
    'cluster/h2 /targets/1 Compile.Cluster.Protocol',
    'cluster/h2 /targets/2/address Compile.Cluster.Protocol',
    'cluster/h2c /targets/1 Compile.Cluster.Protocol',
  ]);
  assert.match(r.issues[0]!.message, /https:\/\/127\.0\.0\.1:2/);
  const bad = run([cluster('x', { targets: ['127.0.0.1:1'], protocol: 'h3' })]);
  assert.deepEqual(issues(bad), ['cluster/x /protocol Compile.Document']);
});

test('a websocket route to an h2/h2c cluster is refused, also through a traffic-split step (in a group too); an http1.1 one passes', () => {
  const r = run([
    cluster('grpc', { targets: ['127.0.0.1:1'], protocol: 'h2c' }),
    cluster('web', { targets: ['127.0.0.1:2'] }),
    route('direct', { cluster: 'grpc', pathPrefix: '/d', websocket: true }),
    route('split', { cluster: 'web', pathPrefix: '/s', websocket: { maxConnections: 5 }, steps: [{ code: 'traffic-split', settings: { clusters: [{ cluster: 'web', weight: 1 }, { cluster: 'grpc', weight: 1 }] } }] }),
    route('chained', { cluster: 'web', pathPrefix: '/c', websocket: true, steps: [{ code: 'orch', settings: { ref: 'canary' } }] }),
    {
      kind: 'orch',
      name: 'canary',
      doc: {
        nodes: [
          { id: 'id', step: 'request-headers', settings: { set: { 'x-who': 'one' } } },
          { id: 'split', step: 'traffic-split', settings: { clusters: [{ cluster: 'grpc', weight: 1 }] } },
        ],
        links: [],
        groups: [{ id: 'g', nodes: ['id', 'split'], merge: 'all' }],
      },
    },
    route('fine', { cluster: 'web', pathPrefix: '/f', websocket: true }),
    route('http', { cluster: 'grpc', pathPrefix: '/h' }),
  ]);
  assert.deepEqual(issues(r), ['route/direct /websocket Compile.Route.WebSocket', 'route/split /websocket Compile.Route.WebSocket', 'route/chained /websocket Compile.Route.WebSocket']);
  assert.match(r.issues[0]!.message, /cluster grpc speaks h2c/);
});
