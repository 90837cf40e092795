import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Dispatcher } from 'undici';
import { UpstreamGuard } from '../../src/shared/upstream-guard.js';
import type { UpstreamRules } from '../../src/shared/upstream-policy.js';
import type { Upstream } from '../../src/contracts/upstream.js';
import { ClusterPools } from '../../src/worker/upstream-pools.js';
import { ServicePools } from '../../src/worker/service-pools.js';
import { TargetHealth } from '../../src/worker/target-health.js';

// The gateway's own ports are elsewhere: only the default ranges decide below.
const rules: UpstreamRules = { allow: [], deny: [], tenants: {}, admin: { host: '127.0.0.1', port: 1 }, data: { host: '127.0.0.1', port: 2 } };

/** A loopback upstream that counts the requests reaching it. */
async function upstream(t: { after(fn: () => unknown): void }) {
  const seen = { requests: 0 };
  const server = createServer((_req, res) => {
    seen.requests++;
    res.end('ok');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => new Promise((r) => server.close(r)));
  return { port: (server.address() as AddressInfo).port, seen };
}

/** One GET through `up`: its error's name or code, or 'ok'. */
function get(up: Upstream, path = '/'): Promise<string> {
  return new Promise((resolve) => {
    up.dispatch({ path, method: 'GET' }, {
      onConnect() {},
      onHeaders: () => true,
      onData: () => true,
      onComplete: () => resolve('ok'),
      onError: (err: Error) => resolve(err.name === 'UpstreamDeniedError' ? 'denied' : ((err as Error & { code?: string }).code ?? err.message)),
    } as Dispatcher.DispatchHandler);
  });
}

function pools(guard: UpstreamGuard, tenant: string, targets: string[]): ClusterPools {
  const spec = { targets, connectMs: 1_000, headersMs: 5_000, bodyMs: 5_000, connections: { perTarget: 2, maxPending: 2, pendingTimeoutMs: 1_000 } };
  return new ClusterPools(spec, `${tenant}/c`, { upstreamGuard: guard, targetHealth: new TargetHealth(), reportOutlier: () => {}, discovery: { version: 0, get: () => undefined } });
}

test('a guard built from rules refuses a tenant loopback, by literal and by a name resolving there; only allowAll() opens it', async (t) => {
  const { port, seen } = await upstream(t);
  const guard = UpstreamGuard.from(rules);
  for (const host of ['127.0.0.1', 'localhost']) {
    const acme = pools(guard, 'acme', [`${host}:${port}`]);
    t.after(() => acme.close());
    assert.equal(await get(acme.pick()), 'denied', `acme to ${host}`);
  }
  assert.equal(seen.requests, 0, 'nothing reached the upstream');
  assert.ok('denied' in guard.check('acme', `127.0.0.1:${port}`), 'the WebSocket relay gets the same verdict');

  const operator = pools(guard, 'default', [`127.0.0.1:${port}`]);
  const open = pools(UpstreamGuard.allowAll(), 'acme', [`127.0.0.1:${port}`]);
  t.after(() => Promise.all([operator.close(), open.close()]));
  assert.equal(await get(operator.pick()), 'ok', 'default keeps loopback');
  assert.equal(await get(open.pick()), 'ok', 'allowAll refuses nothing');
  assert.equal(seen.requests, 2);
});

test('service connections are per guard: an open one never serves a worker whose policy refuses the address', async (t) => {
  const { port, seen } = await upstream(t);
  const url = `http://127.0.0.1:${port}/check`;
  const open = new ServicePools(UpstreamGuard.allowAll());
  const strict = new ServicePools(UpstreamGuard.from(rules));
  assert.equal(await get(open.pool('acme', url), '/check'), 'ok');
  assert.equal(await get(strict.pool('acme', url), '/check'), 'denied', 'the same tenant and URL, another guard: refused');
  assert.notEqual(open.pool('acme', url), strict.pool('acme', url));
  assert.equal(open.pool('acme', url), open.pool('acme', url), 'one pool per tenant and URL within a guard');
  assert.equal(seen.requests, 1);
  await Promise.all([(open.pool('acme', url) as unknown as { close(): Promise<void> }).close(), (strict.pool('acme', url) as unknown as { close(): Promise<void> }).close()]);
});
