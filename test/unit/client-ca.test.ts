import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readClientCa } from '../../src/shared/client-ca.js';
import { makeCa } from '../helpers/tls-certs.js';

const dir = mkdtempSync(join(tmpdir(), 'switchyard-unit-ca-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
const ca = makeCa('Unit Client CA');
const other = makeCa('Unit Other CA');
const leaf = ca.issue('leaf', [], 'client');
const DAY = 86_400_000;

const message = (r: ReturnType<typeof readClientCa>) => (r.ok ? 'ok' : r.message);

test('the CA is PEM text or a PEM file relative to worker.json; several CAs may be given; the result is their PEM text', () => {
  writeFileSync(join(dir, 'cas.pem'), `${ca.cert}\n${other.cert}`);
  const fromFile = readClientCa('cas.pem', dir);
  assert.ok(fromFile.ok, message(fromFile));
  assert.equal(fromFile.pem.match(/BEGIN CERTIFICATE/g)?.length, 2);
  const inline = readClientCa(ca.cert, '/nowhere');
  assert.ok(inline.ok, message(inline));
  assert.equal(inline.warnings.length, 1);
  assert.match(inline.warnings[0]!, /^listen\.tls\.clientCertificates\.ca: CN=Unit Client CA expires on \d{4}-/, 'a CA valid for a day is about to expire');
  assert.deepEqual(readClientCa(ca.cert, dir, Date.now() - 40 * DAY + 2 * DAY).ok, false, 'not yet valid 38 days ago');
});

test('a CA that cannot serve is refused with why: missing file, no certificate, a leaf, a private key beside it, out of its validity', () => {
  writeFileSync(join(dir, 'leaf.pem'), leaf.cert);
  writeFileSync(join(dir, 'with-key.pem'), `${ca.cert}${ca.key}`);
  writeFileSync(join(dir, 'empty.pem'), 'nothing here');
  assert.match(message(readClientCa('nope.pem', dir)), /^cannot read the CA file .*nope\.pem: ENOENT \(ca is PEM text or the path of a PEM file; cert entities cannot be CAs\)$/);
  assert.match(message(readClientCa('empty.pem', dir)), /holds no PEM certificate/);
  assert.match(message(readClientCa('leaf.pem', dir)), /^certificate 1 \(CN=leaf\) is not a CA/);
  assert.match(message(readClientCa('with-key.pem', dir)), /holds a private key/);
  assert.match(message(readClientCa(ca.cert, dir, Date.now() + 3 * DAY)), /^certificate 1 \(CN=Unit Client CA\) is valid from .* to /);
  assert.match(message(readClientCa('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----', dir)), /^certificate 1 cannot be read/);
});
