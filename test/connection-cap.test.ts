import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway } from './helpers/gateway.js';
import { ROOT_KEY, apply } from './helpers/admin.js';
import { KeepAliveClient } from './helpers/keep-alive-client.js';
import { waitFor } from './helpers/wait.js';

/**
 * limits.maxConnections: a worker keeps at most this many connections open; one more is
 * answered 503 (Svc.Data.TooManyConnections) and closed at once, without disturbing the
 * open ones, and a closed connection frees its place.
 */
test('the connection beyond maxConnections is answered 503 and closed; the others keep being served', { timeout: 30_000 }, async (t) => {
  const CAP = 5;
  const gw = await startGateway(t, { keys: [ROOT_KEY], workers: 1, edit: (c) => (c.limits = { maxConnections: CAP }) });
  await apply(gw, [['route', 'fixed', { directResponse: { statusCode: 200, body: 'ok' } }]]);
  const clients: KeepAliveClient[] = [];
  t.after(() => clients.forEach((c) => c.socket.destroy()));
  const open = (): KeepAliveClient => {
    const c = new KeepAliveClient(gw.dataPort);
    clients.push(c);
    return c;
  };

  const kept = Array.from({ length: CAP }, open);
  for (const [i, c] of kept.entries()) assert.equal((await c.get(`/first/${i}`))?.body, 'ok', `connection ${i}: ${c.received}`);

  // The refusal is written as the connection opens, before any request: the client only reads.
  const extra = open();
  const refused = await extra.answer();
  assert.equal(refused?.status, 503, extra.received);
  assert.equal((refused.json as { code?: string }).code, 'Svc.Data.TooManyConnections');
  assert.equal(await Promise.race([extra.closed, new Promise((r) => setTimeout(() => r('still open'), 5_000))]), 'end', 'the server closed it');

  for (const [i, c] of kept.entries()) assert.equal((await c.get(`/again/${i}`))?.body, 'ok', `connection ${i} after the refusal: ${c.received}`);

  // Once the server has closed them too, their places are free, and only theirs: the
  // refused connection's place was given back when it closed.
  for (const c of kept.slice(0, 2)) assert.notEqual(await c.end(), 'still open');
  for (const i of [1, 2]) {
    const fresh = open();
    assert.equal((await fresh.get(`/fresh/${i}`))?.body, 'ok', fresh.received);
  }
  const over = open();
  assert.equal((await over.answer())?.status, 503, over.received);
  for (const c of kept.slice(2)) assert.equal((await c.get('/third'))?.body, 'ok');

  const line = await waitFor('a maxConnections warn line', () => gw.logLines().find((l) => (l as { limit?: string }).limit === 'maxConnections'));
  assert.equal((line as { level?: number }).level, 40, 'a warn line');
  assert.equal((line as { count?: number }).count, 1, JSON.stringify(line));
});
