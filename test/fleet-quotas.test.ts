import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startFleet } from './helpers/fleet.js';
import { startGateway, newToken, type Gateway } from './helpers/gateway.js';
import { issueKey } from './helpers/keys.js';
import { request } from './helpers/http.js';
import { BOUNDED } from './helpers/wait.js';

const LIMIT = 100;
/**
 * Per node and identity: under the 32 admin calls an identity may have in progress on a node
 * (each identity calls from an address of its own: under the 64 connections per address).
 */
const PER_IDENTITY = 28;
const quotas = (c: Record<string, unknown>) => (c.quotas = { tenants: { q: { entities: LIMIT } } });

/**
 * `PER_IDENTITY` creates per identity per node, all started at once; the answers by
 * "status code", and the routes the store then holds (read on the first node).
 */
async function flood(nodes: Gateway[], tokens: string[]): Promise<{ answers: Map<string, number>; stored: number; ms: number }> {
  const calls: Promise<string>[] = [];
  const t0 = performance.now();
  nodes.forEach((gw, n) =>
    tokens.forEach((token, k) => {
      for (let i = 0; i < PER_IDENTITY; i++) {
        const name = `r-${n}-${k}-${i}`;
        const doc = { pathPrefix: `/${name}`, directResponse: { statusCode: 200, body: name } };
        calls.push(request(`${gw.adminUrl}/api/v1/q/config/set/route/${name}`, { method: 'POST', token, body: doc, timeoutMs: 30_000, localAddress: `127.0.0.${k + 1}` }).then((r) => `${r.status} ${r.json?.code ?? ''}`.trim()));
      }
    }),
  );
  const answers = new Map<string, number>();
  for (const a of await Promise.all(calls)) answers.set(a, (answers.get(a) ?? 0) + 1);
  const ms = performance.now() - t0;
  const list = await request(`${nodes[0]!.adminUrl}/api/v1/q/config/list/route`, { token: tokens[0]! });
  assert.equal(list.status, 200, list.text);
  return { answers, stored: (list.json.items as unknown[]).length, ms };
}

function assertQuotaHeld(r: { answers: Map<string, number>; stored: number }, total: number): void {
  const summary = JSON.stringify([...r.answers]);
  assert.deepEqual([...r.answers.keys()].sort(), ['200', '413 Svc.Quota.Entities'], `only stored or refused by the quota, never 5xx: ${summary}`);
  assert.equal(r.answers.get('200'), LIMIT, summary);
  assert.equal(r.answers.get('413 Svc.Quota.Entities'), total - LIMIT, summary);
  assert.equal(r.stored, LIMIT, 'the store holds exactly the quota');
}

test(`regression: three nodes on one postgres:// store enforce entities: ${LIMIT} together; 168 concurrent creates store ${LIMIT}, the rest 413`, BOUNDED, async (t) => {
  const fleet = await startFleet(t, 3, 1, quotas);
  for (const gw of fleet.nodes) gw.tokens.root = fleet.token;
  const sub = await issueKey(fleet.nodes[0]!, fleet.token, 'q', { name: 'writer', scopes: ['config:write', 'config:read'] });
  const r = await flood(fleet.nodes, [fleet.token, sub.token]);
  t.diagnostic(`168 creates over 3 nodes: ${JSON.stringify([...r.answers])} in ${r.ms.toFixed(0)} ms`);
  assertQuotaHeld(r, 3 * 2 * PER_IDENTITY);
});

test(`one node counts the same: 168 concurrent creates store ${LIMIT}, the rest 413`, BOUNDED, async (t) => {
  const token = newToken();
  const gw = await startGateway(t, { keys: [{ id: 'root', scopes: ['*'], token }], edit: quotas });
  gw.tokens.root = token;
  const sub = await issueKey(gw, token, 'q', { name: 'writer', scopes: ['config:write', 'config:read'] });
  const sub2 = await issueKey(gw, token, 'q', { name: 'writer2', scopes: ['config:write', 'config:read'] });
  // Six identities on one node, as two on each of three.
  const sub3 = await issueKey(gw, token, 'q', { name: 'writer3', scopes: ['config:write', 'config:read'] });
  const sub4 = await issueKey(gw, token, 'q', { name: 'writer4', scopes: ['config:write', 'config:read'] });
  const sub5 = await issueKey(gw, token, 'q', { name: 'writer5', scopes: ['config:write', 'config:read'] });
  const r = await flood([gw], [token, sub.token, sub2.token, sub3.token, sub4.token, sub5.token]);
  t.diagnostic(`168 creates on 1 node: ${JSON.stringify([...r.answers])} in ${r.ms.toFixed(0)} ms`);
  assertQuotaHeld(r, 6 * PER_IDENTITY);
});
