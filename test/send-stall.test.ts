import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { startGateway, type Gateway } from './helpers/gateway.js';
import { startUpstream } from './helpers/upstream.js';
import { ROOT_KEY, apply } from './helpers/admin.js';
import { request } from './helpers/http.js';
import { BOUNDED, waitFor } from './helpers/wait.js';
import { accessLogLine } from './helpers/access-log-file.js';
import type { Json } from './helpers/json.js';

// worker.json limits.sendTimeoutMs: a client that reads a response's head and then stops
// reading holds no request, concurrency slot or upstream longer than the bound.

const SEND_TIMEOUT_MS = 1_000;
/** Far more than loopback's socket buffers hold for a client that does not read. */
const BIG = 256 * 1024 * 1024;
/** The largest answer the cache step keeps: gathered whole, then sent in one piece. */
const WHOLE = 16 * 1024 * 1024;

/** A GET whose client reads until the head is in, then stops reading; `rest()` reads on to the end of the connection. */
function readHeadThenStop(port: number, path: string, headers = ''): Promise<{ head: string; at: number; rest: () => Promise<number> }> {
  return new Promise((resolve, reject) => {
    let got = Buffer.alloc(0);
    const s: Socket = connect(port, '127.0.0.1', () => s.write(`GET ${path} HTTP/1.1\r\nhost: x\r\n${headers}\r\n`));
    s.on('error', () => undefined);
    const timer = setTimeout(() => reject(new Error(`no head within 5 s on ${path}`)), 5_000);
    const onHead = (c: Buffer) => {
      got = Buffer.concat([got, c]);
      const end = got.indexOf('\r\n\r\n');
      if (end < 0) return;
      clearTimeout(timer);
      s.pause();
      s.off('data', onHead);
      let bytes = got.length - end - 4;
      const rest = () =>
        new Promise<number>((done) => {
          s.on('data', (d: Buffer) => (bytes += d.length));
          s.on('close', () => done(bytes));
          s.resume();
          setTimeout(() => s.destroy(), 10_000).unref();
        });
      resolve({ head: got.subarray(0, end).toString('latin1'), at: Date.now(), rest });
    };
    s.on('data', onHead);
  });
}


/** The route's request counts as the metrics show them. */
async function counts(gw: Gateway, route: string): Promise<string[]> {
  const m = (await request(`${gw.adminUrl}/metrics`, { token: gw.tokens.root })).text;
  return m.split('\n').filter((l) => l.startsWith('switchyard_requests_total{') && l.includes(`route="${route}"`));
}

test('a client that stops reading is closed after limits.sendTimeoutMs: 499 in the metrics and the access log, its concurrency slot and upstream freed', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const gw = await startGateway(t, {
    workers: 1, // the concurrency slot is per worker
    keys: [ROOT_KEY],
    edit: (c) => {
      c.limits = { sendTimeoutMs: SEND_TIMEOUT_MS };
      c.log = { ...(c.log as Record<string, Json>), access: { enabled: true, path: 'access.log' } };
    },
  });
  await apply(gw, [
    ['cluster', 'up', { targets: [up.target] }],
    ['route', 'length', { pathPrefix: '/length', cluster: 'up', steps: [{ code: 'concurrency-limit', settings: { max: 1 } }] }],
    ['route', 'chunked', { pathPrefix: '/chunked', cluster: 'up', steps: [{ code: 'concurrency-limit', settings: { max: 1 } }] }],
    // The cache step gathers the answer whole and sends it in one piece (tryEnd, the rest when writable).
    ['route', 'whole', { pathPrefix: '/whole', cluster: 'up', steps: [{ code: 'concurrency-limit', settings: { max: 1 } }, { code: 'cache', settings: { ttlSeconds: 60, maxEntryBytes: WHOLE } }] }],
  ]);

  const cases = [
    ['length', 'an upstream\'s Content-Length body, relayed as it comes', BIG, ''],
    ['chunked', 'an upstream\'s chunked body, relayed as it comes', BIG, 'x-up-chunked: 1\r\n'],
    ['whole', 'a whole body (an answer the cache step gathered)', WHOLE, ''],
  ] as const;
  for (const [route, what, size, extra] of cases) {
    await t.test(what, async (st) => {
      const path = `/${route}/stalled`;
      const headers = `x-up-stream-bytes: ${size}\r\n${extra}`;
      const stalled = await readHeadThenStop(gw.dataPort, path, headers);
      assert.match(stalled.head, /^HTTP\/1\.1 200 /);
      // While the unread answer is held, it holds the route's only slot.
      const refused = await request(`${gw.dataUrl}/${route}/while-held`);
      assert.equal(refused.status, 503, refused.text);

      const line = await accessLogLine(gw, path);
      const afterMs = Date.now() - stalled.at;
      assert.equal(line.status, 499, 'the client did not take the answer');
      st.diagnostic(`ended ${afterMs} ms after the head reached the client`);
      // The wait starts once the socket buffers are full; the bound ends it, not the 256 MiB.
      assert.ok(afterMs >= SEND_TIMEOUT_MS - 100 && afterMs < SEND_TIMEOUT_MS + 5_000, `ended after ${afterMs} ms`);

      const next = await request(`${gw.dataUrl}/${route}/next`, { headers: { 'x-up-stream-bytes': '100' } });
      assert.equal(next.status, 200, `the slot is free again: ${next.text}`);
      if (size === BIG) {
        const rec = up.requests.find((r) => r.url === path)!;
        await waitFor('the upstream answer cut', () => rec.closed && !rec.finished);
      }
      const read = await stalled.rest();
      assert.ok(read < size, `the connection was closed after ${read} of ${size} body bytes`);
      const series = await waitFor('the route counts', async () => {
        const c = await counts(gw, route);
        return c.some((l) => l.includes('status_class="4xx"')) && c;
      });
      assert.deepEqual(series.filter((l) => l.includes('status_class="4xx"')), [`switchyard_requests_total{tenant="default",route="${route}",method="GET",status_class="4xx"} 1`]);
    });
  }

  const warn = gw.logLines().find((l) => (l as { limit?: string }).limit === 'sendTimeout') as { timeoutMs?: number } | undefined;
  assert.equal(warn?.timeoutMs, SEND_TIMEOUT_MS, 'the limit is logged at warn');
});
