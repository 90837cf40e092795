import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as v from 'valibot';
import { RouteDoc } from '../../src/compiler/documents.js';

// Regression: a directResponse could carry Content-Length, Transfer-Encoding or Connection;
// the uws engine wrote them beside its own framing lines (two Content-Length lines).
const route = (headers: Record<string, string>) => ({ pathPrefix: '/x', directResponse: { statusCode: 200, body: 'hi', headers } });

test('a directResponse refuses framing and hop-by-hop header names, in any case; other names pass', () => {
  for (const name of ['Content-Length', 'transfer-encoding', 'Connection', 'Keep-Alive', 'Upgrade', 'TE', 'Trailer']) {
    const r = v.safeParse(RouteDoc, route({ [name]: '5' }));
    assert.equal(r.success, false, name);
    assert.match(r.issues![0]!.message, /managed by the gateway/, name);
  }
  assert.equal(v.safeParse(RouteDoc, route({ 'X-Kettle': 'on', 'Cache-Control': 'no-store' })).success, true);
});
