import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HealthProber } from '../../src/supervisor/health-prober.js';
import { UpstreamGuard } from '../../src/shared/upstream-guard.js';
import type { CompiledHealthCheck } from '../../src/contracts/generation.js';
import type { TargetHealth } from '../../src/contracts/node-status.js';
import { h2Upstream } from '../helpers/h2-server.js';
import { makeCa } from '../helpers/tls-certs.js';

/**
 * The supervisor's health probes of an h2/h2c cluster's targets speak HTTP/2, with the
 * same path and status rules as over HTTP/1.1.
 */

const check = (o: Partial<CompiledHealthCheck> = {}): CompiledHealthCheck => ({
  path: '/healthz',
  intervalMs: 40,
  timeoutMs: 500,
  healthyThreshold: 1,
  unhealthyThreshold: 2,
  expectStatus: [],
  initial: 'healthy',
  ...o,
});

/** Starts a prober and resolves at its first state change, with why. */
function watch(t: { after(fn: () => unknown): void }, target: string, c: CompiledHealthCheck, protocol: 'h2' | 'h2c', tls?: { ca: string; verify: boolean }) {
  let changed!: (v: { to: TargetHealth; why: string }) => void;
  const flip = new Promise<{ to: TargetHealth; why: string }>((r) => (changed = r));
  const p = new HealthProber('default', target, c, tls, (prober, _from, why) => changed({ to: prober.state, why }), UpstreamGuard.allowAll(), protocol);
  t.after(() => p.stop());
  p.start();
  return { p, flip };
}

test('an h2c target is probed over HTTP/2 (GET path, the Host as :authority): an unexpected status takes it out, a good one brings it back', async (t) => {
  let status = 503;
  const seen: string[] = [];
  const up = await h2Upstream(t, (stream, headers) => {
    seen.push(`${headers[':method']} ${headers[':path']} ${headers[':authority']} ${headers['user-agent']}`);
    stream.respond({ ':status': status });
    stream.end('x'.repeat(100 * 1024)); // more than a probe reads
  });
  const down = watch(t, up.target, check({ host: 'svc.internal' }), 'h2c');
  assert.deepEqual(await down.flip, { to: 'unhealthy', why: 'status 503' });
  assert.equal(seen[0], 'GET /healthz svc.internal switchyard-health-check');
  assert.ok(down.p.failures >= 2);

  status = 204;
  const back = watch(t, up.target, check({ initial: 'unhealthy' }), 'h2c');
  assert.deepEqual(await back.flip, { to: 'healthy', why: 'status 204' });
  assert.equal(seen.at(-1), `GET /healthz ${up.target} switchyard-health-check`, 'without host: the target');
});

test("an h2 target is probed over TLS with the cluster's ca and ALPN h2; an HTTP/1.1 upstream fails an h2c probe", async (t) => {
  const ca = makeCa('probe CA');
  const alpn: string[] = [];
  const up = await h2Upstream(
    t,
    (stream, _headers, session) => {
      alpn.push(String(session.alpnProtocol));
      stream.respond({ ':status': 500 });
      stream.end();
    },
    { tls: ca.issue('upstream', ['IP:127.0.0.1'], 'server') },
  );
  const tls = watch(t, up.target, check(), 'h2', { ca: ca.cert, verify: true });
  assert.deepEqual(await tls.flip, { to: 'unhealthy', why: 'status 500' });
  assert.equal(alpn[0], 'h2');

  const h1 = createHttpServer((_req, res) => res.end('ok'));
  await new Promise<void>((r) => h1.listen(0, '127.0.0.1', r));
  t.after(() => {
    h1.closeAllConnections();
    h1.close();
  });
  const wrong = watch(t, `127.0.0.1:${(h1.address() as AddressInfo).port}`, check(), 'h2c');
  const flip = await wrong.flip;
  assert.equal(flip.to, 'unhealthy');
  assert.notEqual(flip.why.startsWith('status'), true, `an HTTP/1.1 answer is no HTTP/2 answer: ${flip.why}`);
});
