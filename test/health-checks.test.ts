import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { startGateway, type Gateway } from './helpers/gateway.js';
import { ROOT_KEY, apply } from './helpers/admin.js';
import { BOUNDED, sleep, waitFor } from './helpers/wait.js';
import { request as httpRequest } from './helpers/http.js';
import { runCli } from './helpers/cli.js';

/** A target the test can kill and bring back on the same port; counts requests and probes. */
class Target {
  requests = 0;
  probes = 0;
  /** What /health answers. */
  healthStatus = 200;
  /** Set: requests other than /health are held here unanswered until release(). */
  held: ServerResponse[] | null = null;
  private server: Server | null = null;
  port = 0;

  async start(): Promise<this> {
    const server = createServer((req, res) => {
      if (req.url === '/health') {
        this.probes++;
        res.statusCode = this.healthStatus;
        return void res.end();
      }
      this.requests++;
      if (this.held) return void this.held.push(res);
      res.end('ok');
    });
    await new Promise<void>((r) => server.listen(this.port, '127.0.0.1', r));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
    return this;
  }

  release(): void {
    for (const res of this.held ?? []) res.end('ok');
    this.held = null;
  }

  kill(): void {
    this.server?.closeAllConnections();
    this.server?.close();
    this.server = null;
  }

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }
}

async function targets(t: { after(fn: () => void): void }, n: number): Promise<Target[]> {
  const list = await Promise.all(Array.from({ length: n }, () => new Target().start()));
  t.after(() => list.forEach((x) => x.kill()));
  return list;
}

/** Keeps `clients` keep-alive clients sending GET /x until stop(); counts answers by status. */
function traffic(gw: Gateway, clients: number) {
  const agent = new Agent({ connections: clients });
  let running = true;
  const counts = { ok: 0, failed: 0 };
  const loops = Array.from({ length: clients }, async () => {
    while (running) {
      try {
        const r = await request(`http://127.0.0.1:${gw.dataPort}/x`, { dispatcher: agent, headers: { host: 'a.test' } });
        await r.body.text();
        if (r.statusCode === 200) counts.ok++;
        else counts.failed++;
      } catch {
        counts.failed++;
      }
    }
  });
  return {
    counts,
    stop: async () => {
      running = false;
      await Promise.all(loops);
      await agent.close();
    },
  };
}

const CHECK = { path: '/health', intervalMs: 200, timeoutMs: 150, healthyThreshold: 2, unhealthyThreshold: 2 };

test('a killed target leaves the rotation at the threshold and rejoins when revived, under 16 keep-alive clients', BOUNDED, async (t) => {
  const [a, b] = await targets(t, 2);
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [['cluster', 'c', { targets: [a!.address, b!.address], healthCheck: CHECK }], ['route', 'all', { cluster: 'c' }]]);
  const load = traffic(gw, 16);
  await sleep(500);
  b!.kill();
  await waitFor('the unhealthy line', () => gw.logLines().some((l) => (l as { msg?: string }).msg === 'upstream target unhealthy: out of rotation'), { timeoutMs: 3_000 });
  const failedInWindow = load.counts.failed;
  await sleep(500);
  assert.equal(load.counts.failed, failedInWindow, 'no failure after the target left the rotation');
  const revivedAt = Date.now();
  await b!.start();
  const before = b!.requests;
  await waitFor('requests on the revived target', () => b!.requests > before, { timeoutMs: 3_000, intervalMs: 10 });
  const rejoinMs = Date.now() - revivedAt;
  await load.stop();
  t.diagnostic(`failed requests while detecting: ${failedInWindow} of ${load.counts.ok + load.counts.failed}; rejoined after ${rejoinMs} ms`);
  assert.equal(failedInWindow, 0, 'connect failures fail over to the other target');
  assert.ok(rejoinMs <= CHECK.intervalMs * CHECK.healthyThreshold + 200 + 300, `rejoined after ${rejoinMs} ms`);
  assert.ok(gw.logLines().some((l) => (l as { msg?: string }).msg === 'upstream target healthy: back in rotation'));
});

test('with 4 workers a target sees one probe per interval, and a failing check keeps a live target out across a publish', BOUNDED, async (t) => {
  const [a, b] = await targets(t, 2);
  const gw = await startGateway(t, { keys: [ROOT_KEY], workers: 4 });
  await apply(gw, [['cluster', 'c', { targets: [a!.address, b!.address], healthCheck: CHECK }], ['route', 'all', { cluster: 'c' }]]);
  await sleep(300);
  const p0 = a!.probes;
  await sleep(2_000);
  const probes = a!.probes - p0;
  t.diagnostic(`probes in 2 s at 200 ms with 4 workers: ${probes}`);
  assert.ok(probes >= 7 && probes <= 12, `${probes} probes`);

  b!.healthStatus = 503;
  await waitFor('b out of rotation', () => gw.logLines().some((l) => (l as { target?: string; to?: string }).target === b!.address && (l as { to?: string }).to === 'unhealthy'), { timeoutMs: 3_000 });
  await sleep(100); // the table reaches every worker
  await apply(gw, [['route', 'other', { pathPrefix: '/other', directResponse: { statusCode: 200, body: 'x' } }]]);
  const before = b!.requests;
  const load = traffic(gw, 8);
  await sleep(500);
  await load.stop();
  t.diagnostic(`after the publish: a ${a!.requests}, b ${b!.requests - before}`);
  assert.equal(b!.requests - before, 0, 'the unhealthy target stayed out after a publish that kept it');
  assert.equal(load.counts.failed, 0);
});

test('when the checks fail on every target, traffic goes to all of them (panic), not to none', BOUNDED, async (t) => {
  const [a, b] = await targets(t, 2);
  a!.healthStatus = 500;
  b!.healthStatus = 500;
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  // Weighted: with every target out and no panic, smooth round robin would fall back to the first alone.
  const doc = { targets: [{ address: a!.address, weight: 1 }, { address: b!.address, weight: 2 }], healthCheck: { ...CHECK, expectStatus: [200] } };
  await apply(gw, [['cluster', 'c', doc], ['route', 'all', { cluster: 'c' }]]);
  await waitFor('both unhealthy', () => gw.logLines().filter((l) => (l as { to?: string }).to === 'unhealthy').length >= 2, { timeoutMs: 3_000 });
  const load = traffic(gw, 8);
  await sleep(500);
  await load.stop();
  t.diagnostic(`a ${a!.requests}, b ${b!.requests}, failed ${load.counts.failed}`);
  assert.equal(load.counts.failed, 0);
  assert.ok(a!.requests > 0 && b!.requests > 0, 'both targets served');
});

// These three read state over the admin port, with no timing claim, each on its own gateway:
// side by side.
describe('cluster health', { concurrency: true }, () => {
  test('cluster health over REST and the CLI shows each target\'s state; a token without cluster:read gets 403', BOUNDED, async (t) => {
    const [a, b] = await targets(t, 2);
    b!.healthStatus = 503;
    const gw = await startGateway(t, { keys: [ROOT_KEY, { id: 'reader', scopes: ['config:read'] }] });
    await apply(gw, [
      ['cluster', 'c', { targets: [a!.address, b!.address], healthCheck: CHECK }],
      ['cluster', 'plain', { targets: [a!.address] }],
      ['route', 'all', { cluster: 'c' }],
    ]);
    const url = (name: string) => `${gw.adminUrl}/api/v1/default/clusters/${name}/health`;
    const states = await waitFor('b unhealthy in the answer', async () => {
      const r = await httpRequest(url('c'), { token: gw.tokens.root });
      const body = r.json as { targets: { target: string; state: string; failures: number; lastCheckedAt: string | null }[] };
      return r.status === 200 && body.targets.find((x) => x.target === b!.address)?.state === 'unhealthy' && body;
    }, { timeoutMs: 3_000 });
    const ta = states.targets.find((x) => x.target === a!.address)!;
    assert.equal(ta.state, 'healthy');
    assert.ok(ta.lastCheckedAt !== null);
    assert.ok(states.targets.find((x) => x.target === b!.address)!.failures >= 2);

    // The metrics name the cluster as every series names an entity: its tenant and its name apart.
    const metrics = (await httpRequest(`${gw.adminUrl}/metrics`, { token: gw.tokens.root })).text;
    assert.match(metrics, new RegExp(`\\nswitchyard_target_healthy\\{tenant="default",cluster="c",target="${b!.address}"\\} 0\\n`), metrics);
    assert.match(metrics, new RegExp(`\\nswitchyard_target_healthy\\{tenant="default",cluster="c",target="${a!.address}"\\} 1\\n`));

    const plain = await httpRequest(url('plain'), { token: gw.tokens.root });
    assert.deepEqual((plain.json as { targets: { state: string }[] }).targets.map((x) => x.state), ['unchecked']);
    assert.equal((await httpRequest(url('nope'), { token: gw.tokens.root })).status, 404);
    const denied = await httpRequest(url('c'), { token: gw.tokens.reader });
    assert.equal(denied.status, 403);
    assert.equal((denied.json as { code: string }).code, 'Svc.Auth.Scope');

    const cli = await runCli(['cluster', 'health', 'c'], { env: { SWITCHYARD_ADMIN: gw.adminUrl, SWITCHYARD_TOKEN: gw.tokens.root! } });
    assert.equal(cli.code, 0, cli.stderr);
    const out = cli.json as { targets: { target: string; state: string }[] };
    assert.equal(out.targets.find((x) => x.target === b!.address)!.state, 'unhealthy');
  });

  test('cluster health counts the requests in flight at each target over all workers, and 0 once they are answered', BOUNDED, async (t) => {
    const [slow, idle] = await targets(t, 2);
    slow!.held = [];
    const gw = await startGateway(t, { keys: [ROOT_KEY], workers: 2 });
    await apply(gw, [['cluster', 'c', { targets: [slow!.address], healthCheck: CHECK }], ['cluster', 'other', { targets: [idle!.address] }], ['route', 'all', { cluster: 'c' }]]);
    // Six requests on their own connections, so the kernel spreads them over both workers.
    const agents = Array.from({ length: 6 }, () => new Agent({ connections: 1 }));
    t.after(() => Promise.all(agents.map((a) => a.destroy())));
    const answers = agents.map((dispatcher) => request(`http://127.0.0.1:${gw.dataPort}/x`, { dispatcher }).then((r) => r.body.text().then(() => r.statusCode)));
    await waitFor('six requests held at the target', () => slow!.held!.length === 6);
    const inFlight = async (name: string) => {
      const r = await httpRequest(`${gw.adminUrl}/api/v1/default/clusters/${name}/health`, { token: gw.tokens.root });
      return (r.json as { targets: { target: string; inFlight: number }[] }).targets.map((x) => [x.target, x.inFlight]);
    };
    assert.deepEqual(await inFlight('c'), [[slow!.address, 6]]);
    assert.deepEqual(await inFlight('other'), [[idle!.address, 0]], 'a cluster no request has used yet');
    slow!.release();
    assert.deepEqual(await Promise.all(answers), [200, 200, 200, 200, 200, 200]);
    await waitFor('in flight back to 0', async () => (await inFlight('c'))[0]![1] === 0, { timeoutMs: 2_000 });
  });

  test('a tenant cannot make the supervisor probe more than 256 targets: the rest stay unchecked and a warn line says so', BOUNDED, async (t) => {
    const gw = await startGateway(t, { keys: [ROOT_KEY] });
    // Loopback addresses on port 9, where nothing listens (never the gateway's own ports): each probe fails at once.
    const many = Array.from({ length: 260 }, (_, i) => `127.0.${1 + Math.floor(i / 200)}.${2 + (i % 200)}:9`);
    await apply(gw, [['cluster', 'big', { targets: many, healthCheck: { path: '/health', intervalMs: 60_000 } }], ['route', 'all', { cluster: 'big' }]]);
    await waitFor('the warn line', () => gw.logLines().some((l) => (l as { msg?: string }).msg?.startsWith('health checks: the tenant has more targets')));
    const r = await httpRequest(`${gw.adminUrl}/api/v1/default/clusters/big/health`, { token: gw.tokens.root });
    const states = (r.json as { targets: { state: string }[] }).targets.map((x) => x.state);
    assert.equal(states.filter((s) => s === 'unchecked').length, 4);
    assert.equal(states.length, 260);
  });
});
