import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { startGateway } from './helpers/gateway.js';
import { ROOT_KEY, apply } from './helpers/admin.js';
import { request, type HttpResult } from './helpers/http.js';
import { BOUNDED } from './helpers/wait.js';

/**
 * How the upstream drops a keep-alive connection once it answered one request on it:
 *  - `reset`: an RST as soon as the next request's first bytes arrive;
 *  - `fin`: a FIN (no answer) as soon as the next request's first bytes arrive;
 *  - `fin-after-answer`: a FIN right after the first answer, which says keep-alive (the
 *    idle-timeout race: the gateway may already be sending the next request).
 */
type Drop = 'reset' | 'fin' | 'fin-after-answer';

interface ClosingUpstream {
  target: string;
  /** Requests received whole, by their x-id header. */
  seen: Map<string, number>;
  /** Connections dropped with a request arriving on them. */
  dropped: () => number;
}

/** A raw HTTP/1.1 upstream that answers exactly one request per connection, then drops it as `drop` says. */
async function closingUpstream(t: TestContext, drop: Drop): Promise<ClosingUpstream> {
  const seen = new Map<string, number>();
  let dropped = 0;
  const server = createServer((socket: Socket) => {
    let buffered = Buffer.alloc(0);
    let answered = false;
    socket.on('error', () => {});
    socket.on('data', (d: Buffer) => {
      if (answered) {
        // The next request's first bytes, on a connection the upstream is done with.
        if (!socket.destroyed && socket.writable) {
          dropped++;
          if (drop === 'reset') socket.resetAndDestroy();
          else socket.end();
        }
        return;
      }
      buffered = Buffer.concat([buffered, d]);
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = buffered.subarray(0, end).toString('latin1');
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      if (buffered.length < end + 4 + length) return;
      answered = true;
      const id = /\r\nx-id: *(\S+)/i.exec(head)?.[1] ?? '?';
      seen.set(id, (seen.get(id) ?? 0) + 1);
      socket.write('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\n');
      if (!head.startsWith('HEAD ')) socket.write('ok');
      if (drop === 'fin-after-answer') setTimeout(() => socket.end(), Math.random() * 3);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => new Promise((r) => server.close(r)));
  return { target: `127.0.0.1:${(server.address() as AddressInfo).port}`, seen, dropped: () => dropped };
}

const describe = (r: HttpResult) => `${r.status} ${r.text.slice(0, 120)}`;

for (const drop of ['reset', 'fin'] as const) {
  test(`a keep-alive connection the upstream drops (${drop}) as the next request arrives: GET and HEAD are re-sent on a new connection, a POST gets 502 and reaches the upstream at most once`, BOUNDED, async (t) => {
    const up = await closingUpstream(t, drop);
    // One worker: every request after the first on a connection meets the drop, deterministically.
    const gw = await startGateway(t, { keys: [ROOT_KEY], workers: 1 });
    await apply(gw, [
      ['cluster', 'up', { targets: [up.target] }],
      ['route', 'all', { cluster: 'up', pathPrefix: '/' }],
    ]);
    const failed: string[] = [];
    for (let i = 0; i < 30; i++) {
      const method = i % 2 === 0 ? 'GET' : 'HEAD';
      const r = await request(`${gw.dataUrl}/s${i}`, { method, headers: { 'x-id': `s${i}` } });
      if (r.status !== 200) failed.push(`${method} /s${i}: ${describe(r)}`);
    }
    for (let round = 0; round < 5; round++) {
      const batch = await Promise.all(
        Array.from({ length: 8 }, (_, k) => request(`${gw.dataUrl}/c${round}-${k}`, { method: k % 3 === 0 ? 'HEAD' : 'GET', headers: { 'x-id': `c${round}-${k}` } })),
      );
      batch.forEach((r, k) => r.status !== 200 && failed.push(`/c${round}-${k}: ${describe(r)}`));
    }
    assert.deepEqual(failed, [], 'no GET or HEAD fails');
    assert.ok(up.dropped() >= 15, `the race was met (${up.dropped()} drops)`);

    // A POST on the connection a GET just used meets the same drop: it is not sent twice.
    const posts: HttpResult[] = [];
    const get = async (id: string) => assert.equal((await request(`${gw.dataUrl}/${id}`, { headers: { 'x-id': id } })).status, 200);
    for (let i = 0; i < 5; i++) {
      await get(`before-p${i}`);
      posts.push(await request(`${gw.dataUrl}/p${i}`, { method: 'POST', body: `body ${i}`, headers: { 'x-id': `p${i}` } }));
      await get(`before-e${i}`);
      posts.push(await request(`${gw.dataUrl}/e${i}`, { method: 'POST', headers: { 'x-id': `e${i}`, 'content-length': '0' } }));
    }
    for (const r of posts) {
      assert.equal(r.status, 502, describe(r));
      assert.equal(r.json?.code, 'Svc.Data.UpstreamUnreachable');
    }
    for (const [id, n] of up.seen) assert.ok(n === 1 || !/^[pe]\d/.test(id), `${id} reached the upstream ${n} times`);
  });
}

test('an upstream that closes each keep-alive connection right after its answer: no GET or HEAD fails under concurrent load', BOUNDED, async (t) => {
  const up = await closingUpstream(t, 'fin-after-answer');
  const gw = await startGateway(t, { keys: [ROOT_KEY], workers: 2 });
  await apply(gw, [
    ['cluster', 'up', { targets: [up.target] }],
    ['route', 'all', { cluster: 'up', pathPrefix: '/' }],
  ]);
  const failed: string[] = [];
  for (let round = 0; round < 20; round++) {
    const batch = await Promise.all(
      Array.from({ length: 10 }, (_, k) => request(`${gw.dataUrl}/r${round}-${k}`, { method: k % 4 === 0 ? 'HEAD' : 'GET' })),
    );
    batch.forEach((r, k) => r.status !== 200 && failed.push(`/r${round}-${k}: ${describe(r)}`));
  }
  assert.deepEqual(failed, []);
});
