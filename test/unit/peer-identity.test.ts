import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { PeerIdentities, type PeerSocket } from '../../src/worker/engine/node/peer-identity.js';
import { makeCa } from '../helpers/tls-certs.js';

const leaf = new X509Certificate(makeCa('Peer Unit CA').issue('svc', ['DNS:svc.test'], 'client').cert);

/** A TLS socket as node gives it, counting how often its certificate is read. */
function socket(authorized: boolean, encrypted = true): PeerSocket & { reads: number } {
  const s = {
    encrypted,
    authorized,
    reads: 0,
    getPeerX509Certificate() {
      s.reads++;
      return leaf;
    },
  };
  return s;
}

test('a connection\'s certificate is parsed once, however many requests ask; each connection has its own', () => {
  const ids = new PeerIdentities();
  const a = socket(true);
  const b = socket(true);
  const first = ids.of(a);
  assert.equal(first?.subject, 'CN=svc');
  for (let i = 0; i < 5; i++) assert.equal(ids.of(a), first);
  assert.equal(a.reads, 1);
  assert.equal(ids.of(b)?.subject, 'CN=svc');
  assert.equal(b.reads, 1);
});

test('an unverified certificate (optional mode), a plain socket or none count as no certificate, and are not parsed', () => {
  const ids = new PeerIdentities();
  const unverified = socket(false);
  assert.equal(ids.of(unverified), null);
  assert.equal(ids.of(unverified), null);
  assert.equal(unverified.reads, 0);
  const plain = socket(true, false);
  assert.equal(ids.of(plain), null);
  assert.equal(plain.reads, 0);
  assert.equal(ids.of(null), null);
  assert.equal(ids.of(undefined), null);
});
