import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { clientCertificateOf, normalFingerprint, rfc4514, sanEntry, subjectAltNames } from '../../src/shared/client-cert-names.js';
import { makeCa } from '../helpers/tls-certs.js';

test('node\'s one-RDN-a-line names become RFC 4514: most specific first, multi-valued RDNs joined with +, escapes kept', () => {
  assert.equal(rfc4514('C=DE\nO=Acme\\, Inc.\nCN=svc'), 'CN=svc,O=Acme\\, Inc.,C=DE');
  assert.equal(rfc4514('O=Acme\nOU=a + CN=b'), 'OU=a+CN=b,O=Acme');
  assert.equal(rfc4514('CN=a\\+b'), 'CN=a\\+b', 'an escaped + in a value is not a separator');
  assert.equal(rfc4514(''), '');
});

test('subjectAltName text becomes one entry per name; a quoted value with ", " stays one entry; DNS lower case, IPv6 compressed', () => {
  assert.deepEqual(subjectAltNames('DNS:A.Example, URI:spiffe://acme/svc, email:x@y.test, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1'), [
    'DNS:a.example', 'URI:spiffe://acme/svc', 'email:x@y.test', 'IP:127.0.0.1', 'IP:::1',
  ]);
  // node ≥ 17.3.1 quotes a value holding a comma: a crafted SAN cannot pass for two.
  assert.deepEqual(subjectAltNames('URI:"spiffe://a/b, DNS:admin.test", DNS:ok.test'), ['URI:spiffe://a/b, DNS:admin.test', 'DNS:ok.test']);
  assert.deepEqual(subjectAltNames(undefined), []);
  assert.equal(sanEntry('IP', '2001:db8:0:0:0:0:0:1'), 'IP:2001:db8::1');
  assert.equal(normalFingerprint('AB:CD:EF'), 'abcdef');
});

test('a real certificate as steps see it: subject and issuer in RFC 4514, SANs, 64-hex fingerprint', () => {
  const ca = makeCa('Unit CA');
  const leaf = ca.issue('svc-a', ['URI:spiffe://acme.test/svc-a', 'DNS:Svc-A.Acme.Test', 'IP:::1'], 'client');
  const x509 = new X509Certificate(leaf.cert);
  const c = clientCertificateOf(x509);
  assert.deepEqual(c, {
    subject: 'CN=svc-a',
    issuer: 'CN=Unit CA',
    sans: ['URI:spiffe://acme.test/svc-a', 'DNS:svc-a.acme.test', 'IP:::1'],
    fingerprint256: x509.fingerprint256.replaceAll(':', '').toLowerCase(),
    verified: true,
  });
  assert.match(c.fingerprint256, /^[0-9a-f]{64}$/);
});
