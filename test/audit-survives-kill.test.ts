import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { fileURLToPath } from 'node:url';
import { newToken, startGateway, tempDir, type Gateway, type GatewayOptions } from './helpers/gateway.js';
import { ROOT_KEY } from './helpers/admin.js';
import { request } from './helpers/http.js';
import { freePorts } from './helpers/ports.js';
import { sleep } from './helpers/wait.js';

/**
 * An acknowledged admin write always has its audit record: the record commits with the
 * change, before the answer leaves, so a kill -9 of the supervisor at any moment cannot
 * leave a write answered 2xx without its entry in audit/list.
 */

const DIE_AFTER_ANSWER = fileURLToPath(new URL('./helpers/die-after-answer.mjs', import.meta.url));
const doc = (body: string) => ({ pathPrefix: `/${body}`, directResponse: { statusCode: 200, body } });

/** An admin POST; resolves with the traceId once a 2xx status line arrived, null on anything else (refused, reset, killed). */
function write(gw: Gateway, rest: string, body: unknown = {}): Promise<string | null> {
  return new Promise((resolve) => {
    const payload = JSON.stringify(body);
    const req = httpRequest(
      `${gw.adminUrl}/api/v1/default/${rest}`,
      {
        method: 'POST',
        agent: false,
        headers: { authorization: `Bearer ${gw.tokens.root}`, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) },
      },
      (res) => {
        const ok = res.statusCode !== undefined && res.statusCode >= 200 && res.statusCode < 300;
        resolve(ok ? String(res.headers['x-trace-id']) : null);
        res.resume();
        res.on('error', () => {});
      },
    );
    req.setTimeout(10_000, () => req.destroy());
    req.on('error', () => resolve(null));
    req.end(payload);
  });
}

const setDraft = (gw: Gateway, name: string) => write(gw, `config/set/route/${name}`, doc(name));

/** Every 2xx record of the default tenant: traceId -> `operation target`, read page by page. */
async function audited2xx(gw: Gateway): Promise<Map<string, string>> {
  const out = new Map<string, string | null>();
  let before: number | null = null;
  for (let page = 0; page < 1_000; page++) {
    const r = await request(`${gw.adminUrl}/api/v1/default/audit/list?limit=500${before === null ? '' : `&before=${before}`}`, { token: gw.tokens.root });
    assert.equal(r.status, 200, r.text);
    for (const e of r.json.items) if (e.status >= 200 && e.status < 300) out.set(e.traceId, `${e.operation} ${e.target}`);
    if (r.json.next === null) return out;
    before = r.json.next;
  }
  throw new Error('audit list did not end within 1000 pages');
}

async function sameVolume(t: Parameters<typeof startGateway>[0]): Promise<GatewayOptions> {
  const [dataPort, adminPort] = await freePorts(2);
  return { dir: tempDir(t), dataPort, adminPort, workers: 1, volume: 'virtual://state.db', keys: [{ ...ROOT_KEY, token: newToken() }] };
}

test('a supervisor killed the instant its 2xx answer left still has the audit record of that write', { timeout: 60_000 }, async (t) => {
  const opts = await sameVolume(t);
  const acked = new Map<string, string>();
  for (let i = 0; i < 3; i++) {
    const gw = await startGateway(t, { ...opts, env: { NODE_OPTIONS: `--import=${DIE_AFTER_ANSWER}` } });
    const name = `sure-${i}`;
    const traceId = await setDraft(gw, name);
    assert.ok(traceId, `config set ${name} was answered 2xx before the kill`);
    acked.set(traceId, `config.set route/${name}`);
    const exit = await gw.exited;
    assert.equal(exit.signal, 'SIGKILL', 'the supervisor died right after answering');
    gw.kill(); // its worker
  }
  const gw = await startGateway(t, opts);
  const audited = await audited2xx(gw);
  for (const [traceId, what] of acked) assert.equal(audited.get(traceId), what, `acknowledged ${what} (trace ${traceId}) has its audit record`);
});

interface KillChain {
  rounds: number;
  /** traceId -> `operation target` of every write answered 2xx. */
  acked: Map<string, string>;
  unanswered: number;
  published: number;
  /** The volume's 2xx audit records, read by a gateway started after the last kill. */
  audited: Map<string, string>;
}

/** Gateways on one volume, each SIGKILLed while writers and a publisher are busy, until `maxRounds` kills or `budgetMs` passed. */
async function killChain(t: TestContext, maxRounds: number, budgetMs: number): Promise<KillChain> {
  const opts = await sameVolume(t);
  const WRITERS = 4;
  const acked = new Map<string, string>();
  const started = Date.now();
  let rounds = 0;
  let unanswered = 0;
  let published = 0;
  for (; rounds < maxRounds && Date.now() - started < budgetMs; rounds++) {
    const gw = await startGateway(t, opts);
    let stop = false;
    const writer = async (w: number) => {
      for (let i = 0; !stop && i < 10_000; i++) {
        const name = `r${rounds}-w${w}-${i}`;
        const traceId = await setDraft(gw, name);
        if (traceId) acked.set(traceId, `config.set route/${name}`);
        else unanswered++;
        if (traceId === null) return; // the supervisor is gone
      }
    };
    // Publishes too: their record commits in the generation's own transaction.
    let firstPublish: () => void = () => {};
    const onePublished = new Promise<void>((resolve) => (firstPublish = resolve));
    const publisher = async () => {
      for (let i = 0; !stop && i < 10_000; i++) {
        const traceId = await write(gw, 'publish/go');
        if (traceId === null) return;
        acked.set(traceId, 'publish.go null');
        published++;
        firstPublish();
      }
    };
    const writers = [...Array.from({ length: WRITERS }, (_, w) => writer(w)), publisher()];
    // A publish waits for every worker's acknowledgement, which on a slow machine can take
    // longer than the kill window: every fourth round kills only after one was answered.
    if (rounds % 4 === 0) await Promise.race([onePublished, sleep(10_000)]);
    await sleep(5 + Math.floor(Math.random() * 60));
    gw.kill(); // SIGKILL to the supervisor's process group
    stop = true;
    await gw.exited;
    await Promise.all(writers);
  }
  const gw = await startGateway(t, opts);
  return { rounds, acked, unanswered, published, audited: await audited2xx(gw) };
}

// Two chains on two volumes side by side: a restart is mostly one process booting on one
// core, so the kills come about twice as fast as from one chain on a 2-core machine.
test('100 kill -9 of the supervisor during acknowledged writes: every acknowledged write has its audit record', { timeout: 120_000 }, async (t) => {
  const CHAINS = 2;
  const ROUNDS = 100;
  const BUDGET_MS = 46_000; // restarts share the CPU with other work: stop early rather than time out
  const started = Date.now();
  const chains = await Promise.all(Array.from({ length: CHAINS }, () => killChain(t, ROUNDS / CHAINS, BUDGET_MS)));
  const sum = (f: (c: KillChain) => number) => chains.reduce((n, c) => n + f(c), 0);
  const rounds = sum((c) => c.rounds);
  t.diagnostic(`${rounds} kills (${chains.map((c) => c.rounds).join(' + ')}) in ${Date.now() - started} ms; ${sum((c) => c.acked.size)} acknowledged writes (${sum((c) => c.published)} publishes), ${sum((c) => c.unanswered)} config sets cut off by a kill, ${sum((c) => c.audited.size)} 2xx records`);
  assert.ok(rounds >= 20, `at least 20 kills within the budget (${rounds})`);
  assert.ok(sum((c) => c.acked.size) > rounds, 'writes were acknowledged between kills');
  assert.ok(sum((c) => c.published) > 0, 'publishes were acknowledged between kills');
  const missing = chains.flatMap((c) => [...c.acked].filter(([traceId, what]) => c.audited.get(traceId) !== what));
  assert.deepEqual(missing, [], 'every acknowledged write has its audit record');
});
