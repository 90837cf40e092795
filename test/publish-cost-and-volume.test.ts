import { test } from 'node:test';
import assert from 'node:assert/strict';
import { statSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { startGateway, tempDir } from './helpers/gateway.js';
import { ROOT_KEY, publish, setEntity } from './helpers/admin.js';
import { request } from './helpers/http.js';

const volumeBytes = (file: string) => [file, `${file}-wal`].reduce((n, f) => n + (existsSync(f) ? statSync(f).size : 0), 0);

// The latency bound of a publish on a busy instance: a publish recompiles only its own tenant,
// so the supervisor's event loop is not held for the compile of every other tenant.
test('20 tenants of 200 entities: a publish of one tenant takes under 300 ms and /healthz answers within 150 ms throughout (median of 3)', async (t) => {
  // The tenants' clusters aim at loopback, which tenants other than default reach only when allowed.
  const gw = await startGateway(t, { keys: [ROOT_KEY], workers: 2, edit: (c) => (c.upstreams = { allow: ['127.0.0.0/8'] }) });
  for (let tn = 0; tn < 20; tn++) {
    const tenant = `t${tn}`;
    for (let i = 0; i < 20; i++) await setEntity(gw, 'cluster', `c${i}`, { targets: [`127.0.0.1:${9000 + i}`] }, tenant);
    for (let i = 0; i < 180; i++) {
      await setEntity(gw, 'route', `r${i}`, { hosts: [`${tenant}.example`], pathPrefix: `/p${i}/`, cluster: `c${i % 20}`, steps: [{ code: 'request-headers', settings: { set: { 'x-a': 'b' } } }] }, tenant);
    }
    await publish(gw, tenant);
  }
  const runs: { publishMs: number; healthzMaxMs: number }[] = [];
  for (let k = 0; k < 3; k++) {
    await setEntity(gw, 'route', 'r0', { hosts: ['t3.example'], pathPrefix: `/changed${k}/`, cluster: 'c0' }, 't3');
    let done = false;
    let healthzMaxMs = 0;
    const poll = (async () => {
      for (let n = 0; !done && n < 2000; n++) {
        const t0 = performance.now();
        assert.equal((await request(`${gw.adminUrl}/healthz`)).status, 200);
        healthzMaxMs = Math.max(healthzMaxMs, performance.now() - t0);
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    await new Promise((r) => setTimeout(r, 30));
    const t0 = performance.now();
    await publish(gw, 't3');
    const publishMs = performance.now() - t0;
    await new Promise((r) => setTimeout(r, 30));
    done = true;
    await poll;
    runs.push({ publishMs, healthzMaxMs });
  }
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[1]!;
  t.diagnostic(JSON.stringify(runs));
  // Measured on the 2-vCPU CI machine: publish 140-250 ms, the longest /healthz 80-125 ms.
  // Compiling all 20 tenants instead of one adds 80-170 ms, so these bounds catch that only
  // when it comes on top of a typical run; the tenant cache itself has its unit test.
  assert.ok(median(runs.map((r) => r.publishMs)) < 300, `publish ms: ${JSON.stringify(runs)}`);
  assert.ok(median(runs.map((r) => r.healthzMaxMs)) < 150, `healthz max ms: ${JSON.stringify(runs)}`);
});

for (const keep of [5, 50]) test(`history.keep ${keep}: the volume stops growing once the tenant has that many generations (file + WAL over 1,000 small publishes)`, async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'v.db');
  const gw = await startGateway(t, {
    keys: [ROOT_KEY],
    volume: `virtual://${file}`,
    edit: (c) => {
      c.history = { keep };
      c.quotas = { publishesPerMinute: 1_000_000 };
    },
  });
  for (let i = 0; i < 20; i++) await setEntity(gw, 'cluster', `c${i}`, { targets: ['127.0.0.1:9'], timeouts: { connectMs: 1000 + i } });
  const sizes: number[] = [];
  const started = Date.now();
  let n = 0;
  for (; n < 1000 && Date.now() - started < 120_000; n++) {
    await setEntity(gw, 'cluster', `c${n % 20}`, { targets: ['127.0.0.1:9'], timeouts: { connectMs: 2000 + n } });
    await publish(gw);
    if (n % 200 === 199) sizes.push(volumeBytes(file));
  }
  t.diagnostic(`${n} publishes, volume bytes every 200: ${sizes.join(', ')}`);
  assert.ok(sizes.length >= 2, `only ${n} publishes in 120 s`);
  // Past the first `keep` publishes every new generation replaces a pruned one and the file reuses
  // its pages; what still grows is the audit trail (a row per write), well under 1 KiB a publish.
  assert.ok(sizes.at(-1)! - sizes[0]! <= (n - 200) * 1024, `grew: ${sizes.join(', ')}`);
  assert.ok(sizes.at(-1)! <= 8 * 1024 * 1024, `over 8 MiB: ${sizes.join(', ')}`);
  const h = await request(`${gw.adminUrl}/api/v1/default/publish/history`, { token: gw.tokens.root });
  assert.equal(h.json.items.length, keep);
  const oldest = h.json.items.at(-1).generation;
  const gone = await request(`${gw.adminUrl}/api/v1/default/publish/rollback/${oldest - 1}`, { method: 'POST', token: gw.tokens.root });
  assert.equal(gone.status, 410, gone.text);
  assert.equal(gone.json.code, 'Svc.Publish.Pruned');
});
