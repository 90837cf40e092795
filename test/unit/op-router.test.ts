import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OpRouter } from '../../src/admin/op-router.js';
import { OPERATIONS, type Operation } from '../../src/admin/contract.js';

function op(id: string, method: 'GET' | 'POST', path: string): Operation {
  return { id, method, path, family: 'sys', access: 'read', auth: 'scope', level: 'instance', summary: id };
}

const literal = op('literal', 'GET', '/api/v1/sys/cluster/status');
const param = op('param', 'GET', '/api/v1/{tenant}/cluster/status');
const write = op('write', 'POST', '/api/v1/{tenant}/config/set/{kind}/{name}');

test('a literal segment beats a parameter, whatever the order of the table', () => {
  for (const ops of [
    [literal, param, write],
    [param, write, literal],
  ]) {
    const router = new OpRouter(ops);
    const sys = router.match('GET', '/api/v1/sys/cluster/status');
    assert.equal(sys.kind, 'match');
    assert.equal(sys.kind === 'match' && sys.op.id, 'literal');
    const acme = router.match('GET', '/api/v1/acme/cluster/status');
    assert.deepEqual(acme.kind === 'match' && [acme.op.id, acme.params], ['param', { tenant: 'acme' }]);
  }
});

test('parameters are captured and percent-decoded', () => {
  const router = new OpRouter([write]);
  const r = router.match('POST', '/api/v1/default/config/set/route/my%20route');
  assert.equal(r.kind, 'match');
  assert.deepEqual(r.kind === 'match' && r.params, { tenant: 'default', kind: 'route', name: 'my route' });
});

test('no match: wrong segment count, empty segment, trailing slash, bad percent-encoding', () => {
  const router = new OpRouter([literal, param, write]);
  for (const path of [
    '/api/v1/sys/cluster',
    '/api/v1/sys/cluster/status/extra',
    '/api/v1//cluster/status',
    '/api/v1/sys/cluster/status/',
    '/api/v1/default/config/set/route/%E0%A4%A',
    '/',
  ]) {
    const r = router.match(path.includes('config') ? 'POST' : 'GET', path);
    assert.equal(r.kind, 'none', path);
  }
});

test('a known path with another method reports the allowed methods; HEAD is served by GET', () => {
  const router = new OpRouter([literal, write]);
  assert.deepEqual(router.match('POST', '/api/v1/sys/cluster/status'), { kind: 'method', allow: ['GET', 'HEAD'] });
  assert.deepEqual(router.match('GET', '/api/v1/default/config/set/route/r'), { kind: 'method', allow: ['POST'] });
  const head = router.match('HEAD', '/api/v1/sys/cluster/status');
  assert.equal(head.kind === 'match' && head.op.id, 'literal');
});

test('the real contract: sys paths never read as tenant "sys"', () => {
  const router = new OpRouter(OPERATIONS);
  for (const o of OPERATIONS) {
    if (o.path.includes('{')) continue;
    const r = router.match(o.method, o.path);
    assert.equal(r.kind === 'match' && r.op.id, o.id, `${o.method} ${o.path}`);
  }
});
