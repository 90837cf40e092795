import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadGatewayConfig } from '../../src/shared/gateway-config.js';
import type { UwsSupport } from '../../src/shared/uws-support.js';
import type { Json } from '../helpers/json.js';
import { makeCa } from '../helpers/tls-certs.js';

const dir = mkdtempSync(join(tmpdir(), 'switchyard-unit-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const LOADS: UwsSupport = { ok: true };
const NO_BUILD: UwsSupport = { ok: false, reason: 'uWebSockets.js has no build for Node v26.0.0 (ABI 147, linux-x64)' };

function load(listen: Record<string, Json>, support: UwsSupport = LOADS, limits: Record<string, Json> = {}) {
  const file = join(dir, `w${n++}.json`);
  writeFileSync(file, JSON.stringify({ volume: 'memory:', listen: { port: 8080, ...listen }, admin: { listen: '127.0.0.1:9180' }, limits }));
  let asked = 0;
  const loaded = loadGatewayConfig(file, {}, () => (asked++, support));
  return { loaded, asked, errors: loaded.errors.map((e) => `${e.path}: ${e.message}`) };
}

test('listen.engine defaults to auto, h2c to false, tls.protocols to none (the engine picks); the h2 limits have their defaults', () => {
  const { loaded, asked } = load({ tls: { port: 8443 } });
  assert.equal(loaded.ok, true, JSON.stringify(loaded.errors));
  const c = loaded.config!;
  assert.equal(c.listen.engine, 'auto');
  assert.equal(c.listen.h2c, false);
  assert.equal(c.listen.tls?.protocols, undefined);
  assert.equal(c.limits.h2MaxConcurrentStreams, 100);
  assert.equal(c.limits.h2MaxHeaderListBytes, 32_768);
  assert.equal(c.limits.h2MaxResetsPerSecond, 200);
  assert.equal(c.limits.h2ResetCooldownS, 10);
  assert.equal(asked, 0, 'the runtime is probed only for an explicit uws');
});

test('the engine, the protocols and the h2 limits are checked by the schema, each error at its path', () => {
  const cases: [Record<string, Json>, Record<string, Json>, string][] = [
    [{ engine: 'fast' }, {}, 'listen.engine'],
    [{ h2c: 'yes' }, {}, 'listen.h2c'],
    [{ tls: { port: 8443, protocols: [] } }, {}, 'listen.tls.protocols: must name at least one protocol'],
    [{ tls: { port: 8443, protocols: ['h2', 'h2'] } }, {}, 'listen.tls.protocols: must not name a protocol twice'],
    [{ tls: { port: 8443, protocols: ['h3'] } }, {}, 'listen.tls.protocols.0'],
    [{}, { h2MaxConcurrentStreams: 0 }, 'limits.h2MaxConcurrentStreams'],
    [{}, { h2MaxHeaderListBytes: 100 }, 'limits.h2MaxHeaderListBytes'],
    [{}, { h2MaxResetsPerSecond: 1.5 }, 'limits.h2MaxResetsPerSecond'],
    [{}, { h2ResetCooldownS: -1 }, 'limits.h2ResetCooldownS'],
    [{}, { h2ResetCooldownS: 3_601 }, 'limits.h2ResetCooldownS'],
    [{}, { eventLoopStallMs: 999 }, 'limits.eventLoopStallMs'],
    [{}, { workerHeapMb: -1 }, 'limits.workerHeapMb'],
  ];
  for (const [listen, limits, expected] of cases) {
    const { loaded, errors } = load(listen, LOADS, limits);
    assert.equal(loaded.ok, false, JSON.stringify(listen));
    assert.ok(errors.some((e) => e.startsWith(expected)), `${expected} in ${JSON.stringify(errors)}`);
  }
  assert.equal(load({ engine: 'node', h2c: true, tls: { port: 8443, protocols: ['http/1.1', 'h2'] } }).loaded.ok, true);
});

test('the uws engine refuses HTTP/2: h2c and h2 among the TLS protocols', () => {
  assert.deepEqual(load({ engine: 'uws', h2c: true }).errors, ['listen.h2c: the uws engine speaks HTTP/1.1 only']);
  const { errors } = load({ engine: 'uws', tls: { port: 8443, protocols: ['h2', 'http/1.1'] } });
  assert.deepEqual(errors.map((e) => e.split(':')[0]), ['listen.tls.protocols']);
  assert.equal(load({ engine: 'uws', tls: { port: 8443, protocols: ['http/1.1'] } }).loaded.ok, true);
});

test('the uws engine on a runtime where it cannot load is an error naming the reason; auto and node are not', () => {
  const { errors, asked } = load({ engine: 'uws' }, NO_BUILD);
  assert.equal(asked, 1);
  assert.deepEqual(errors, [`listen.engine: uws cannot run here: ${NO_BUILD.ok ? '' : NO_BUILD.reason}; use "node" or "auto"`]);
  assert.equal(load({ engine: 'auto' }, NO_BUILD).loaded.ok, true);
  assert.equal(load({ engine: 'node' }, NO_BUILD).loaded.ok, true);
});

test('listen.tls.clientCertificates: explicit uws is refused at its path, auto and node accept it; mode defaults to required; ca must be a string', () => {
  const ca = makeCa('Engine Unit CA').cert;
  const uws = load({ engine: 'uws', tls: { port: 8443, clientCertificates: { ca } } });
  assert.equal(uws.loaded.ok, false);
  assert.ok(uws.errors.some((e) => e.startsWith('listen.tls.clientCertificates: the uws engine does not show the client certificate')), JSON.stringify(uws.errors));
  for (const engine of ['auto', 'node']) {
    const ok = load({ engine, tls: { port: 8443, clientCertificates: { ca } } });
    assert.equal(ok.loaded.ok, true, JSON.stringify(ok.errors));
    assert.equal(ok.loaded.config!.listen.tls!.clientCertificates!.mode, 'required');
  }
  const list = load({ tls: { port: 8443, clientCertificates: { ca: ['srv'] } } });
  assert.ok(list.errors.some((e) => e.startsWith('listen.tls.clientCertificates.ca: must be PEM text or the path of a PEM file (cert entities cannot be CAs')), JSON.stringify(list.errors));
  assert.ok(load({ tls: { port: 8443, clientCertificates: { ca, mode: 'maybe' } } }).errors.some((e) => e.startsWith('listen.tls.clientCertificates.mode')));
});
