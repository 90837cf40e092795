import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newToken, startGateway, type Gateway } from './helpers/gateway.js';
import { ROOT_KEY } from './helpers/admin.js';
import { envelopeProblem, type HttpResult, type RequestOptions } from './helpers/http.js';
import { requestFrom } from './helpers/http-from.js';
import { BOUNDED, waitFor } from './helpers/wait.js';

/**
 * Token guessing is throttled per socket peer: every failed authentication that
 * presented an Authorization header spends one token of the address's bucket
 * (admin.authFailures {burst, perSecond}); with the bucket empty that address gets
 * 429 Svc.Auth.Throttled (Retry-After) before its token is even looked at. The admin
 * listens on 127.0.0.1; Linux loopback accepts the whole 127/8 as source addresses, so
 * each "client" below is its own 127.0.0.x.
 */

const GUESSER = '127.0.0.2';
const OPERATOR = '127.0.0.3';

const whoami = (gw: Gateway) => `${gw.adminUrl}/api/v1/sys/whoami`;

function assertThrottled(r: HttpResult, what: string): void {
  assert.equal(r.status, 429, `${what}: ${r.status} ${r.text}`);
  assert.equal(envelopeProblem(r), null, r.text);
  assert.equal(r.json.code, 'Svc.Auth.Throttled');
  const header = r.headers['retry-after'];
  assert.match(String(header), /^[1-9]\d*$/, `${what}: Retry-After is a positive number of seconds`);
  assert.equal(r.json.retryAfter, Number(header), 'body retryAfter equals the Retry-After header');
  assert.equal(r.headers['x-trace-id'], r.json.traceId);
}

function assertUnauthenticated(r: HttpResult, what: string): void {
  assert.equal(r.status, 401, `${what}: ${r.status} ${r.text}`);
  assert.equal(r.json.code, 'Svc.Auth.Unauthenticated');
}

async function throttledTotal(gw: Gateway): Promise<number> {
  const r = await requestFrom(OPERATOR, `${gw.adminUrl}/metrics`, { token: gw.tokens.root });
  assert.equal(r.status, 200, r.text);
  const m = /^switchyard_admin_auth_throttled_total (\d+)$/m.exec(r.text);
  assert.ok(m, `no switchyard_admin_auth_throttled_total in\n${r.text}`);
  return Number(m[1]);
}

test('200 guesses from one address are refused after the burst while a valid token from another address is served', BOUNDED, async (t) => {
  // A refill so slow that nothing comes back during the test: every count below is exact.
  const BURST = 10;
  const gw = await startGateway(t, {
    keys: [ROOT_KEY],
    edit: (c) => {
      c.admin.authFailures = { burst: BURST, perSecond: 0.01 };
    },
  });
  const root = gw.tokens.root!;
  let throttled = 0; // every 429 this gateway answers, for the metric
  const from = async (addr: string, opts: RequestOptions, url = whoami(gw)) => {
    const r = await requestFrom(addr, url, opts);
    if (r.status === 429) throttled++;
    return r;
  };

  await t.test('the acceptance: 200 random tokens from one address, a valid token from another interleaved', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 200; i++) {
      // half of the guesses also claim to come from somewhere else: headers change nothing
      const spoof: Record<string, string> = i % 2 ? { 'x-forwarded-for': `10.0.${i}.1`, 'x-real-ip': `10.1.${i}.1`, forwarded: `for=10.2.${i}.1` } : {};
      const r = await from(GUESSER, { token: newToken(), headers: spoof });
      statuses.push(r.status);
      if (r.status === 429) assertThrottled(r, `guess ${i}`);
      else assertUnauthenticated(r, `guess ${i}`);
      if (i % 10 === 0) {
        const ok = await from(OPERATOR, { token: root });
        assert.equal(ok.status, 200, `valid token from ${OPERATOR} during guess ${i}: ${ok.text}`);
        assert.deepEqual(ok.json.scopes, ['*']);
      }
    }
    const n401 = statuses.filter((s) => s === 401).length;
    assert.equal(n401, BURST, `exactly the burst of guesses got 401 (${n401})`);
    assert.equal(statuses.join(' '), [...Array(BURST).fill(401), ...Array(200 - BURST).fill(429)].join(' '), 'the first guesses are 401, every later one 429');
  });

  await t.test('from the throttled address even a valid token is 429, whatever X-Forwarded-For says', async () => {
    assertThrottled(await from(GUESSER, { token: root }), 'valid token from the guesser');
    const spoofs: Record<string, string>[] = [{ 'x-forwarded-for': OPERATOR }, { 'x-forwarded-for': `${OPERATOR}, 127.0.0.1` }, { 'x-real-ip': OPERATOR }];
    for (const headers of spoofs) {
      assertThrottled(await from(GUESSER, { token: root, headers }), `valid token from the guesser with ${JSON.stringify(headers)}`);
    }
    // and the operator is still served
    assert.equal((await from(OPERATOR, { token: root })).status, 200);
    // the health probe needs no token and is not throttled
    assert.equal((await from(GUESSER, {}, `${gw.adminUrl}/healthz`)).status, 200);
  });

  await t.test('the log names the socket peer of the throttled calls, not the forwarded address', async () => {
    const r = await from(GUESSER, { token: newToken(), headers: { 'x-forwarded-for': '203.0.113.9' } });
    assertThrottled(r, 'spoofed guess');
    const line = await waitFor('the log line of the throttled call', () => gw.logLines().find((l) => l.msg === 'admin call' && l.traceId === r.json.traceId), {
      timeoutMs: 3_000,
    });
    assert.equal(line.peer, GUESSER);
    assert.equal(line.status, 429);
    assert.ok(!gw.stderr().includes('203.0.113.9'), 'the forwarded address is not logged');
  });

  await t.test('requests without an Authorization header are not counted', async () => {
    const addr = '127.0.0.4';
    for (let i = 0; i < 3 * BURST; i++) assertUnauthenticated(await from(addr, {}), `no header ${i}`);
    // the whole burst is still there: BURST guesses are 401, the next one 429
    for (let i = 0; i < BURST; i++) assertUnauthenticated(await from(addr, { token: newToken() }), `guess ${i} after the headerless calls`);
    assertThrottled(await from(addr, { token: newToken() }), 'the guess after the burst');
    // once throttled, a headerless call is refused 429 too (the address, not the header, is throttled)
    assertThrottled(await from(addr, {}), 'headerless call from a throttled address');
  });

  await t.test('any presented Authorization header that fails counts, not only bearer tokens', async () => {
    const addr = '127.0.0.5';
    const bad = [`Basic ${Buffer.from('root:nope').toString('base64')}`, 'Bearer', 'Bearer  two words', 'garbage'];
    for (let i = 0; i < BURST; i++) assertUnauthenticated(await from(addr, { headers: { authorization: bad[i % bad.length]! } }), `bad header ${i}`);
    assertThrottled(await from(addr, { headers: { authorization: 'Basic eA==' } }), 'after the burst');
  });

  await t.test('a valid token spends nothing: an address that authenticates is never slowed', async () => {
    const addr = '127.0.0.6';
    for (let i = 0; i < 3 * BURST; i++) assert.equal((await from(addr, { token: root })).status, 200);
    for (let i = 0; i < BURST; i++) assertUnauthenticated(await from(addr, { token: newToken() }), `guess ${i}`);
    assertThrottled(await from(addr, { token: root }), 'valid token after the burst of guesses');
  });

  await t.test('GET /metrics counts every 429', async () => {
    assert.equal(await throttledTotal(gw), throttled);
    assert.ok(throttled >= 200 - BURST);
  });
});

test('after the refill the throttled address authenticates again (burst 10, 20 per second)', BOUNDED, async (t) => {
  const BURST = 10;
  const RATE = 20;
  const gw = await startGateway(t, {
    keys: [ROOT_KEY],
    edit: (c) => {
      c.admin.authFailures = { burst: BURST, perSecond: RATE };
    },
  });
  const root = gw.tokens.root!;

  // Guess until refused; the refill (20/s) lets a few more through than the burst.
  const t0 = Date.now();
  let n401 = 0;
  let refused: HttpResult | undefined;
  for (let i = 0; i < 200 && !refused; i++) {
    const r = await requestFrom(GUESSER, whoami(gw), { token: newToken() });
    if (r.status === 429) refused = r;
    else {
      assertUnauthenticated(r, `guess ${i}`);
      n401++;
    }
  }
  const elapsed = (Date.now() - t0) / 1000;
  assert.ok(refused, 'the guesses were throttled');
  assertThrottled(refused, 'the first refusal');
  assert.ok(n401 >= BURST, `at least the burst got 401 (${n401})`);
  assert.ok(n401 <= BURST + Math.ceil(elapsed * RATE) + 1, `no more than the burst plus the refill got 401 (${n401} in ${elapsed}s)`);
  assert.equal(refused.headers['retry-after'], '1', 'under a second to wait: rounded up to 1');
  assert.equal((await requestFrom(OPERATOR, whoami(gw), { token: root })).status, 200, 'another address is served meanwhile');

  // One token comes back after 1/RATE s; well within Retry-After the valid token is served.
  const waited = Date.now();
  const ok = await waitFor(
    'the valid token from the throttled address to be served again',
    async () => {
      const r = await requestFrom(GUESSER, whoami(gw), { token: root });
      if (r.status === 429) return undefined;
      return r;
    },
    { timeoutMs: 3_000, intervalMs: 20 },
  );
  assert.equal(ok.status, 200, ok.text);
  assert.deepEqual(ok.json.scopes, ['*']);
  assert.ok(Date.now() - waited <= 1_500, `served again within Retry-After (${Date.now() - waited} ms)`);

  // after a full refill the whole burst is available again
  await new Promise((r) => setTimeout(r, Math.ceil((BURST / RATE) * 1000) + 100));
  let again = 0;
  for (let i = 0; i < BURST; i++) if ((await requestFrom(GUESSER, whoami(gw), { token: newToken() })).status === 401) again++;
  assert.equal(again, BURST, 'a refilled bucket lets the whole burst through again');
});

test('without admin.authFailures the defaults apply: 20 failures, then 429', BOUNDED, async (t) => {
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  assert.equal(gw.config.admin.authFailures, undefined);
  const statuses: number[] = [];
  const t0 = Date.now();
  for (let i = 0; i < 30; i++) statuses.push((await requestFrom(GUESSER, whoami(gw), { token: newToken() })).status);
  const elapsed = (Date.now() - t0) / 1000;
  const n401 = statuses.filter((s) => s === 401).length;
  assert.ok(n401 >= 20 && n401 <= 20 + Math.ceil(elapsed * 1) + 1, `20 (+ refill at 1/s) got 401: ${statuses.join(' ')}`);
  assert.equal(statuses.slice(0, 20).join(' '), Array(20).fill(401).join(' '));
  assert.equal(statuses.at(-1), 429);
  assert.equal((await requestFrom(OPERATOR, whoami(gw), { token: gw.tokens.root })).status, 200);
});

test('regression: every call refused 401 is counted in /metrics', BOUNDED, async (t) => {
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  const failures = async () => {
    const r = await requestFrom(OPERATOR, `${gw.adminUrl}/metrics`, { token: gw.tokens.root });
    const m = /^switchyard_admin_auth_failures_total (\d+)$/m.exec(r.text);
    assert.ok(m, `no switchyard_admin_auth_failures_total in\n${r.text}`);
    return Number(m[1]);
  };
  assert.equal(await failures(), 0);
  assertUnauthenticated(await requestFrom(OPERATOR, whoami(gw), {}), 'no token');
  assertUnauthenticated(await requestFrom(OPERATOR, whoami(gw), { token: 'x'.repeat(40) }), 'unknown token');
  assertUnauthenticated(await requestFrom(OPERATOR, whoami(gw), { headers: { authorization: 'Basic abc' } }), 'another scheme');
  assert.equal((await requestFrom(OPERATOR, whoami(gw), { token: gw.tokens.root })).status, 200);
  assert.equal(await failures(), 3);
});
