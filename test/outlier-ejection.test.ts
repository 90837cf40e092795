import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startGateway, type Gateway } from './helpers/gateway.js';
import { ROOT_KEY, apply } from './helpers/admin.js';
import { sendMany } from './helpers/load.js';
import { request } from './helpers/http.js';
import { BOUNDED, sleep, waitFor } from './helpers/wait.js';

/** A target answering `status` (changeable), counting requests. */
async function target(t: { after(fn: () => void): void }, status = 200): Promise<{ address: string; requests: number; status: number; arrivals: number[] }> {
  const me = { address: '', requests: 0, status, arrivals: [] as number[] };
  const server: Server = createServer((_req, res) => {
    me.requests++;
    me.arrivals.push(Date.now());
    res.statusCode = me.status;
    res.end('x');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  me.address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  return me;
}


const ejectedLines = (gw: Gateway, target: string) => gw.logLines().filter((l) => (l as { msg?: string; target?: string }).msg === 'upstream target ejected: out of rotation' && (l as { target?: string }).target === target) as { ejectMs: number; time: number }[];

test('a target answering 503 is ejected after consecutiveFailures, returns after ejectMs, and is ejected longer when it still fails', BOUNDED, async (t) => {
  const good = await target(t);
  const bad = await target(t, 503);
  const gw = await startGateway(t, { keys: [ROOT_KEY], workers: 2 });
  // 2 s: long enough that the ejection's log line, read through a loaded machine's pipes, comes well inside it.
  const outlier = { consecutiveFailures: 3, ejectMs: 2_000, maxEjectedPercent: 50 };
  await apply(gw, [['cluster', 'c', { targets: [good.address, bad.address], outlier }], ['route', 'all', { cluster: 'c' }]]);
  await sendMany(gw.dataPort, 40);
  await waitFor('the ejection', () => ejectedLines(gw, bad.address).length >= 1);
  await sleep(50);
  // The window is the supervisor's (its log line's time and ejectMs): on a loaded machine the 100
  // requests may outlast it, and those after it may rightly reach the target again.
  const ejection = ejectedLines(gw, bad.address)[0]!;
  const start = Date.now();
  const during = await sendMany(gw.dataPort, 100);
  assert.ok(start < ejection.time + ejection.ejectMs - 200, `the requests started ${start - ejection.time} ms into a ${ejection.ejectMs} ms ejection: too late to test it`);
  const inside = bad.arrivals.filter((at) => at >= start && at < ejection.time + ejection.ejectMs - 20);
  assert.equal(inside.length, 0, 'no request reached the ejected target while it was ejected');
  assert.ok(during.every((s) => s === 200));
  // Back after ejectMs; still failing: ejected again, for longer.
  await waitFor('back in rotation', () => gw.logLines().some((l) => (l as { msg?: string }).msg === 'upstream target back from ejection: in rotation'), { timeoutMs: 5_000 });
  await sendMany(gw.dataPort, 60);
  await waitFor('a second, longer ejection', () => ejectedLines(gw, bad.address).length >= 2, { timeoutMs: 3_000 });
  const lines = ejectedLines(gw, bad.address);
  const metrics = (await request(`${gw.adminUrl}/metrics`, { token: gw.tokens.root })).text;
  assert.match(metrics, new RegExp(`\\nswitchyard_target_ejections_total\\{tenant="default",cluster="c",target="${bad.address}"\\} [2-9]\\n`), metrics.split('\n').filter((l) => l.includes('ejections')).join('\n'));
  t.diagnostic(`ejections: ${lines.map((l) => l.ejectMs).join(', ')} ms`);
  assert.ok(lines[1]!.ejectMs > lines[0]!.ejectMs);
});

test('with both targets failing and maxEjectedPercent 50, at most one is ejected at a time and every request reaches a target', BOUNDED, async (t) => {
  const a = await target(t, 503);
  const b = await target(t, 503);
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [['cluster', 'c', { targets: [a.address, b.address], outlier: { consecutiveFailures: 2, ejectMs: 5_000, maxEjectedPercent: 50 } }], ['route', 'all', { cluster: 'c' }]]);
  const statuses = await sendMany(gw.dataPort, 200);
  assert.equal(statuses.length, 200);
  assert.ok(statuses.every((s) => s === 503), 'every request was answered by a target');
  const ejected = gw.logLines().filter((l) => (l as { msg?: string }).msg === 'upstream target ejected: out of rotation');
  assert.equal(ejected.length, 1, 'one ejected, the other kept');
  assert.ok(gw.logLines().some((l) => (l as { msg?: string }).msg?.startsWith('upstream target failing, not ejected')));
  const r = await fetch(`${gw.adminUrl}/api/v1/default/clusters/c/health`, { headers: { authorization: `Bearer ${gw.tokens.root}` } });
  const body = (await r.json()) as { targets: { ejectedUntil: string | null }[] };
  assert.equal(body.targets.filter((x) => x.ejectedUntil !== null).length, 1);
});
