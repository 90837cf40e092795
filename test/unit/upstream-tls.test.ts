import { test } from 'node:test';
import assert from 'node:assert/strict';
import { targetParts } from '../../src/shared/target-url.js';
import { UpstreamTlsError, tlsOptions } from '../../src/shared/upstream-tls.js';
import { connectFailed, errorCode, retriable } from '../../src/worker/upstream-failure.js';
import { sendAgain } from '../../src/worker/send-again.js';
import { TlsFailureLog } from '../../src/worker/tls-failure-log.js';
import type { Logger } from '../../src/shared/logger.js';

test('a target as written: its scheme, host:port and origin', () => {
  assert.deepEqual(targetParts('127.0.0.1:80'), { secure: false, hostPort: '127.0.0.1:80', origin: 'http://127.0.0.1:80' });
  assert.deepEqual(targetParts('http://a.example:8080'), { secure: false, hostPort: 'a.example:8080', origin: 'http://a.example:8080' });
  assert.deepEqual(targetParts('https://[::1]:443'), { secure: true, hostPort: '[::1]:443', origin: 'https://[::1]:443' });
});

test('a failed handshake: 502 Svc.Data.UpstreamTls, a connect failure that fails over, not a retriable refusal', () => {
  const err = new UpstreamTlsError('https://a:1', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'self-signed certificate');
  assert.equal(errorCode(err), 'Svc.Data.UpstreamTls');
  assert.equal(connectFailed(err), true);
  assert.equal(retriable(err), false, 'the same target again would fail the same way');
  const attempt = { err, method: 'POST', replayable: false, written: false, answered: false, reused: false, resent: false, failedOver: false };
  assert.equal(sendAgain({ ...attempt, otherTarget: true }), 'failover');
  assert.equal(sendAgain({ ...attempt, otherTarget: false }), null);
  // A TLS alert on an established connection (a refused client certificate) answers the same code.
  assert.equal(errorCode(Object.assign(new Error('alert'), { code: 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED' })), 'Svc.Data.UpstreamTls');
});

test('tlsOptions reads the client certificate from the environment, and names what is unset', () => {
  const tls = { verify: false, serverName: 'api.example', ca: 'CA', clientCertificate: { certificateEnv: 'C', privateKeyEnv: 'K' } };
  assert.deepEqual(tlsOptions(tls, { C: 'cert', K: 'key' }), { options: { rejectUnauthorized: false, servername: 'api.example', ca: 'CA', cert: 'cert', key: 'key' }, missing: [] });
  assert.deepEqual(tlsOptions(tls, { C: 'cert' }), { options: { rejectUnauthorized: false, servername: 'api.example', ca: 'CA' }, missing: ['K'] });
  assert.deepEqual(tlsOptions(undefined), { options: {}, missing: [] });
});

test('the warn line: once per target per window, the next one counting what it left out', (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: 1_000_000 });
  const lines: Record<string, unknown>[] = [];
  const log = { warn: (o: Record<string, unknown>) => lines.push(o) } as unknown as Logger;
  const failures = new TlsFailureLog(log, 'default/c');
  const err = (target: string) => new UpstreamTlsError(target, 'CERT_HAS_EXPIRED', 'certificate has expired');
  failures.failed(err('https://a:1'));
  failures.failed(err('https://a:1'));
  failures.failed(err('https://b:1'));
  assert.deepEqual(lines.map((l) => [l.target, l.reason, l.suppressed]), [['https://a:1', 'CERT_HAS_EXPIRED', undefined], ['https://b:1', 'CERT_HAS_EXPIRED', undefined]]);
  t.mock.timers.tick(10_000);
  failures.failed(err('https://a:1'));
  assert.deepEqual(lines.at(-1)?.suppressed, 1);
  assert.equal(lines.at(-1)?.cluster, 'default/c');
});
