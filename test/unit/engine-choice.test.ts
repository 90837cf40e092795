import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NODE_ONLY, dataPlaneEngine, listenerEngines, resolveEngine, type ListenEngineFields } from '../../src/shared/engine-choice.js';

const LOADS = { ok: true } as const;
const NO_BUILD = { ok: false, reason: 'uWebSockets.js has no build for Node v26.0.0 (ABI 147, linux-x64)' } as const;

test('auto takes uws where it loads, node where it does not (saying why), and node when HTTP/2 is asked for', () => {
  assert.deepEqual(resolveEngine('auto', LOADS), { engine: 'uws', why: 'auto: uWebSockets.js loads on this runtime' });
  assert.deepEqual(resolveEngine('auto', NO_BUILD), { engine: 'node', why: `auto: ${NO_BUILD.reason}` });
  assert.deepEqual(resolveEngine('auto', LOADS, NODE_ONLY.h2), { engine: 'node', why: 'auto: HTTP/2 is asked for and uWebSockets.js speaks HTTP/1.1 only' });
});

test('a named engine is taken as named, whatever the probe says', () => {
  assert.deepEqual(resolveEngine('node', LOADS), { engine: 'node', why: 'listen.engine: node' });
  assert.deepEqual(resolveEngine('uws', LOADS), { engine: 'uws', why: 'listen.engine: uws' });
  assert.deepEqual(resolveEngine('node', NO_BUILD, NODE_ONLY.h2), { engine: 'node', why: 'listen.engine: node' });
});

const listen = (fields: Partial<ListenEngineFields> = {}): ListenEngineFields => ({ host: '127.0.0.1', port: 8080, engine: 'auto', h2c: false, ...fields });

test('the TLS protocols default by engine: h2 first on node, HTTP/1.1 alone on uws; a listed order is kept', () => {
  const tls = { port: 8443 };
  assert.deepEqual(dataPlaneEngine(listen({ tls }), NO_BUILD).tlsProtocols, ['h2', 'http/1.1']);
  assert.deepEqual(dataPlaneEngine(listen({ tls }), LOADS).tlsProtocols, ['http/1.1']);
  assert.deepEqual(dataPlaneEngine(listen({ engine: 'node', tls: { port: 8443, protocols: ['http/1.1', 'h2'] } }), LOADS).tlsProtocols, ['http/1.1', 'h2']);
  const h2 = dataPlaneEngine(listen({ tls: { port: 8443, protocols: ['h2'] } }), LOADS);
  assert.equal(h2.engine, 'node', 'auto with h2 listed takes node');
  assert.equal(dataPlaneEngine(listen({ h2c: true }), LOADS).engine, 'node', 'auto with h2c takes node');
});

test('one line per listener says the engine, why, and what it speaks', () => {
  const l = listen({ tls: { port: 8443 }, h2c: true });
  const lines = listenerEngines(l, dataPlaneEngine(l, NO_BUILD));
  assert.deepEqual(lines.map((x) => x.line), [
    `data port 127.0.0.1:8080: engine node (auto: ${NO_BUILD.reason}), http/1.1, h2c`,
    'TLS port 127.0.0.1:8443: engine node, ALPN h2, http/1.1',
  ]);
  assert.deepEqual(lines[1]!.protocols, ['h2', 'http/1.1']);
  assert.equal(listenerEngines(listen(), dataPlaneEngine(listen(), LOADS)).length, 1, 'no TLS line without listen.tls');
});

test('client certificates take node under auto (uws does not show the peer certificate), and the TLS line says the mode', () => {
  const l = listen({ tls: { port: 8443, clientCertificates: { mode: 'optional' } } });
  const chosen = dataPlaneEngine(l, LOADS);
  assert.deepEqual([chosen.engine, chosen.why], ['node', `auto: ${NODE_ONLY.clientCertificates}`]);
  assert.deepEqual(chosen.tlsProtocols, ['h2', 'http/1.1']);
  assert.equal(listenerEngines(l, chosen)[1]!.line, 'TLS port 127.0.0.1:8443: engine node, ALPN h2, http/1.1, client certificates optional');
});
