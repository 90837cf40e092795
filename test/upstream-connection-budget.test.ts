import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { startGateway } from './helpers/gateway.js';
import { ROOT_KEY, apply, clusterStatus } from './helpers/admin.js';
import { rawExchange, type RawExchange } from './helpers/raw-exchange.js';
import { BOUNDED, sleep, waitFor } from './helpers/wait.js';

/**
 * An upstream that holds GET /poll and /short/hold until release() (a long poll, at most
 * 30 s; hold() holds again), answers anything else at once with the body size it read,
 * and counts its connections.
 */
async function pollUpstream(t: TestContext) {
  const requests: { method: string; url: string; bodyBytes: number }[] = [];
  const held: ServerResponse[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  let released = false;
  const server = createServer((req, res) => {
    const rec = { method: req.method!, url: req.url!, bodyBytes: 0 };
    requests.push(rec);
    req.on('data', (c: Buffer) => (rec.bodyBytes += c.length));
    req.on('end', () => {
      if ((req.url === '/poll' || req.url === '/short/hold') && !released) {
        held.push(res);
        setTimeout(() => res.end('polled'), 30_000).unref();
        return;
      }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ url: req.url, bodyBytes: rec.bodyBytes, headers: req.headers }));
    });
  });
  server.on('connection', (s: Socket) => {
    connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => {
    for (const s of sockets) s.destroy();
    return new Promise((r) => server.close(r));
  });
  return {
    target: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    connections: () => connections,
    held: () => held.filter((r) => !r.writableEnded).length,
    release: () => {
      released = true;
      for (const r of held.splice(0)) if (!r.writableEnded) r.end('polled');
    },
    hold: () => {
      released = false;
    },
  };
}

const poll = (port: number) => rawExchange(port, ['GET /poll HTTP/1.1', 'Host: gw']);
const get = (port: number, path: string) => rawExchange(port, [`GET ${path} HTTP/1.1`, 'Host: gw'], '', 10_000);

/** Slack for an answer due after a deadline: connecting and scheduling on a loaded two-core machine. */
const SLACK_MS = 2_500;

test('600 slow uploads and 600 long polls: a normal GET is answered within pendingTimeoutMs, the uploads hold no upstream connection', BOUNDED, async (t) => {
  // Two workers, as in production; each keeps its own budget (perTarget 50, maxPending 100).
  // ulimit -n is 20000 here: 1200 client sockets, their 1200 gateway sides and 100
  // upstream connections fit (a limit of 1024 would not, and would need fewer clients).
  const up = await pollUpstream(t);
  const gw = await startGateway(t, { workers: 2, keys: [ROOT_KEY] });
  const budget = { perTarget: 50, maxPending: 100, pendingTimeoutMs: 1_000 };
  await apply(gw, [
    // bodyMs 60 s: the slow uploads are not cut (408) while the test runs.
    ['cluster', 'up', { targets: [up.target], connections: budget, timeouts: { bodyMs: 60_000 } }],
    ['route', 'all', { cluster: 'up' }],
  ]);
  const workers = (await clusterStatus(gw)).workers.length;
  assert.equal(workers, 2);

  // 600 uploads of 64 bytes (under the 64 KiB default buffer), one byte every 2 s.
  const BODY = 64;
  const uploads: RawExchange[] = [];
  for (let i = 0; i < 600; i++) {
    uploads.push(rawExchange(gw.dataPort, ['POST /upload HTTP/1.1', 'Host: gw', `Content-Length: ${BODY}`], 'x', 60_000));
  }
  t.after(() => {
    for (const u of uploads) u.sock.destroy();
  });
  let sentBytes = 1;
  const trickle = setInterval(() => {
    if (sentBytes >= BODY - 1) return; // the last byte is the test's to send
    sentBytes++;
    for (const u of uploads) if (!u.sock.destroyed) u.sock.write('x');
  }, 2_000);
  t.after(() => clearInterval(trickle));
  await waitFor('the 600 uploads connected', () => uploads.every((u) => !u.sock.connecting), { timeoutMs: 15_000 });
  await waitFor('two more bytes of every upload sent', () => sentBytes >= 3, { timeoutMs: 10_000 });
  assert.equal(up.connections(), 0, 'slow uploads under maxBytes take no upstream connection');
  assert.equal(up.requests.length, 0);

  // 600 long polls: 50 per worker hold a connection, 100 per worker wait, the rest are refused at once.
  const polls: { ex: RawExchange }[] = [];
  for (let i = 0; i < 600; i++) polls.push({ ex: poll(gw.dataPort) });
  t.after(() => {
    for (const p of polls) p.ex.sock.destroy();
  });
  const heldPolls = budget.perTarget * workers;
  await waitFor(`${600 - heldPolls} polls answered`, () => polls.filter((p) => p.ex.settled()).length >= 600 - heldPolls, { timeoutMs: 20_000, intervalMs: 100 });
  const answered = await Promise.all(polls.filter((p) => p.ex.settled()).map((p) => p.ex.answer));
  for (const a of answered) {
    assert.ok(a, 'answered, not cut');
    assert.equal(a.status, 503);
    assert.equal(a.code, 'Svc.Data.UpstreamBusy');
    assert.ok(a.ms <= budget.pendingTimeoutMs + SLACK_MS, `a poll waited ${Math.round(a.ms)} ms for its refusal`);
  }
  assert.equal(answered.length, 600 - heldPolls, 'exactly the budget holds its connections');
  assert.equal(up.held(), heldPolls);

  // A normal request to the saturated cluster: answered (here 503, as no connection frees up) within the deadline.
  for (let i = 0; i < 4; i++) {
    const a = await get(gw.dataPort, `/normal-${i}`).answer;
    assert.ok(a, 'a normal GET is answered');
    assert.ok(a.status === 200 || (a.status === 503 && a.code === 'Svc.Data.UpstreamBusy'), `${a.status} ${a.body}`);
    assert.ok(a.ms <= budget.pendingTimeoutMs + SLACK_MS, `a normal GET waited ${Math.round(a.ms)} ms`);
    t.diagnostic(`normal GET ${i}: ${a.status} ${a.code ?? ''} after ${Math.round(a.ms)} ms`);
  }
  assert.equal(up.connections(), heldPolls, 'no connection beyond perTarget per worker; none for the uploads');
  assert.equal(up.requests.filter((r) => r.method === 'POST').length, 0);

  // The polls end: connections free up, and uploads that complete go through whole.
  up.release();
  await waitFor('the held polls answered', () => polls.every((p) => p.ex.settled()), { timeoutMs: 10_000 });
  clearInterval(trickle);
  const finishing = uploads.slice(0, 20);
  for (const u of finishing) u.sock.write('x'.repeat(BODY - sentBytes));
  for (const a of await Promise.all(finishing.map((u) => u.answer))) {
    assert.ok(a, 'the finished upload is answered');
    assert.equal(a.status, 200, a.body);
    assert.equal(JSON.parse(a.body).bodyBytes, BODY);
  }
  assert.equal(up.requests.filter((r) => r.method === 'POST').length, 20);
});

test('per worker: a full queue answers 503 UpstreamBusy at once, a request past pendingTimeoutMs gets it then, and clients that leave free their places', BOUNDED, async (t) => {
  // One worker: the budget is per worker, so with one the counts below are exact.
  const up = await pollUpstream(t);
  const gw = await startGateway(t, { workers: 1, keys: [ROOT_KEY] });
  await apply(gw, [
    // A long deadline: the queue stays full for this part of the test.
    ['cluster', 'full', { targets: [up.target], connections: { perTarget: 5, maxPending: 10, pendingTimeoutMs: 30_000 } }],
    ['cluster', 'short', { targets: [up.target], connections: { perTarget: 2, maxPending: 10, pendingTimeoutMs: 1_000 } }],
    ['route', 'full', { cluster: 'full', pathPrefix: '/poll' }],
    ['route', 'full-other', { cluster: 'full', pathPrefix: '/other' }],
    ['route', 'short', { cluster: 'short', pathPrefix: '/short' }],
  ]);

  const running = Array.from({ length: 5 }, () => poll(gw.dataPort));
  await waitFor('5 polls held upstream', () => up.held() === 5);
  let queued = Array.from({ length: 10 }, () => poll(gw.dataPort));
  await sleep(300);
  assert.equal(queued.filter((q) => q.settled()).length, 0, 'the 10 wait');
  assert.equal(up.requests.length, 5);

  // Queue full: refused at once, far before the 30 s deadline.
  const refused = await get(gw.dataPort, '/other').answer;
  assert.ok(refused);
  assert.equal(refused.status, 503);
  assert.equal(refused.code, 'Svc.Data.UpstreamBusy');
  assert.ok(refused.ms < 5_000, `refused after ${Math.round(refused.ms)} ms`);

  // The 10 waiting clients leave: their places free up at once, so 10 others wait instead of being refused.
  for (const q of queued) q.sock.destroy();
  await sleep(200);
  queued = Array.from({ length: 10 }, (_, i) => get(gw.dataPort, `/other-${i}`));
  await sleep(300);
  assert.equal(queued.filter((q) => q.settled()).length, 0, 'the places of the clients that left were free');
  const eleventh = await get(gw.dataPort, '/other-11').answer;
  assert.equal(eleventh?.code, 'Svc.Data.UpstreamBusy');

  // The connections free up: the waiting requests are served; none of those who left reached the upstream.
  up.release();
  for (const a of await Promise.all(queued.map((q) => q.answer))) assert.equal(a?.status, 200);
  for (const r of running) assert.equal((await r.answer)?.status, 200);
  assert.equal(up.requests.filter((r) => r.url === '/poll').length, 5, 'no aborted waiting request was sent');

  // Deadline: 2 connections held on `short`, the third request waits its 1 s, then 503.
  up.hold();
  const hold = Array.from({ length: 2 }, () => rawExchange(gw.dataPort, ['GET /short/hold HTTP/1.1', 'Host: gw']));
  await waitFor('2 requests held on the short cluster', () => up.held() === 2);
  const late = await get(gw.dataPort, '/short/late').answer;
  assert.ok(late);
  assert.equal(late.status, 503);
  assert.equal(late.code, 'Svc.Data.UpstreamBusy');
  assert.ok(late.ms >= 900, `refused after ${Math.round(late.ms)} ms, before the deadline`);
  assert.ok(late.ms <= 1_000 + SLACK_MS, `refused after ${Math.round(late.ms)} ms`);
  assert.equal(up.requests.filter((r) => r.url === '/short/late').length, 0, 'never sent');
  // A body larger than the buffer waits as a stream (the upload paused); past the deadline it is dropped with the 503.
  const big = await rawExchange(gw.dataPort, ['POST /short/big HTTP/1.1', 'Host: gw', `Content-Length: ${1 << 20}`], Buffer.alloc(200_000, 0x62)).answer;
  assert.equal(big?.status, 503);
  assert.equal(big?.code, 'Svc.Data.UpstreamBusy');
  assert.equal(big?.headers.connection, 'close', 'the unread rest of the body ends the connection');
  assert.equal(up.requests.filter((r) => r.url === '/short/big').length, 0);
  up.release();
  for (const h of hold) assert.equal((await h.answer)?.status, 200);
});

test('maxPending 0 refuses at once when the connections are busy, and the retry step retries that refusal', BOUNDED, async (t) => {
  const up = await pollUpstream(t);
  const gw = await startGateway(t, { workers: 1, keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'one', { targets: [up.target], connections: { perTarget: 1, maxPending: 0 } }],
    ['route', 'poll', { cluster: 'one', pathPrefix: '/poll' }],
    ['route', 'plain', { cluster: 'one', pathPrefix: '/plain' }],
    ['route', 'retried', { cluster: 'one', pathPrefix: '/retried', steps: [{ code: 'retry', settings: { attempts: 3, statuses: [502], backoffMs: 400 } }] }],
  ]);
  const held = poll(gw.dataPort);
  await waitFor('the one connection held', () => up.held() === 1);
  const plain = await get(gw.dataPort, '/plain').answer;
  assert.equal(plain?.code, 'Svc.Data.UpstreamBusy');
  // Attempts at about 0, 400 and 1200 ms: the connection frees up in between.
  const retried = get(gw.dataPort, '/retried');
  await sleep(600);
  assert.equal(retried.settled(), false, 'the refusal was retried, not answered');
  up.release();
  const a = await retried.answer;
  assert.equal(a?.status, 200, a?.body);
  assert.equal(JSON.parse(a!.body).url, '/retried');
  assert.equal((await held.answer)?.status, 200);
});
