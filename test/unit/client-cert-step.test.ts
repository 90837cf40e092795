import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as v from 'valibot';
import { clientCert } from '../../src/steps/identity/client-cert.js';
import { syntheticRequest } from '../../src/steps/synthetic-request.js';
import type { ClientCertificate, Flow, StepEnv, StepReply } from '../../src/steps/step.js';
import { freshState } from '../../src/steps/step-state.js';
import { compile } from '../../src/compiler/compile.js';
import type { DraftRow } from '../../src/contracts/entities.js';

const ALICE: ClientCertificate = {
  subject: 'CN=alice,O=Acme',
  issuer: 'CN=Acme CA',
  sans: ['URI:spiffe://acme.test/alice', 'DNS:alice.acme.test', 'URI:https://x.test/a,b'],
  fingerprint256: 'ab'.repeat(32),
  verified: true,
};

function run(settings: unknown, cert: ClientCertificate | null) {
  const parsed = v.parse(clientCert.schema, settings);
  const step = clientCert.create!(parsed, { bucket: 'cc', tenant: 't', env: {} as StepEnv, state: freshState });
  const set: Record<string, string> = {};
  const flow = { req: syntheticRequest({ method: 'GET', path: '/', query: null, headers: [], client: '127.0.0.1', scheme: 'https', clientCert: cert }), vars: {}, setHeader: (n: string, val: string) => (set[n] = val) } as unknown as Flow;
  const out = step(flow) as StepReply | undefined;
  return { status: out?.status ?? 200, code: out ? (JSON.parse(String(out.body)) as { code: string }).code : null, set };
}

test('client-cert: 401 without a verified certificate, its identity in the four headers with one', () => {
  assert.deepEqual([run({}, null).status, run({}, null).code], [401, 'Svc.Data.Unauthenticated']);
  assert.equal(run({}, { ...ALICE, verified: false } as unknown as ClientCertificate).status, 401, 'only a verified certificate counts');
  const ok = run({}, ALICE);
  assert.equal(ok.status, 200);
  assert.deepEqual(ok.set, {
    'x-client-cert-subject': 'CN=alice,O=Acme',
    'x-client-cert-issuer': 'CN=Acme CA',
    'x-client-cert-fingerprint': 'ab'.repeat(32),
    'x-client-cert-san': 'URI:spiffe://acme.test/alice, DNS:alice.acme.test, URI:https://x.test/a%2Cb',
  });
  assert.deepEqual(clientCert.ownedHeaders!(v.parse(clientCert.schema, { subjectHeader: 'X-Who' })), ['x-who', 'x-client-cert-issuer', 'x-client-cert-fingerprint', 'x-client-cert-san']);
});

test('client-cert: any listed subject, SAN or fingerprint lets a certificate through, else 403', () => {
  const cases: [Record<string, unknown>, number][] = [
    [{ subjects: ['CN=alice,O=Acme'] }, 200],
    [{ subjects: ['CN=alice'] }, 403],
    [{ sans: ['DNS:Alice.Acme.Test'] }, 200],
    [{ sans: ['URI:spiffe://acme.test/bob'] }, 403],
    [{ fingerprints: [Array.from({ length: 32 }, () => 'AB').join(':')] }, 200],
    [{ fingerprints: ['cd'.repeat(32)] }, 403],
    [{ subjects: ['CN=bob'], fingerprints: ['ab'.repeat(32)] }, 200],
  ];
  for (const [settings, status] of cases) assert.equal(run(settings, ALICE).status, status, JSON.stringify(settings));
  assert.equal(run({ subjects: ['CN=bob'] }, ALICE).code, 'Svc.Data.Forbidden');
  for (const bad of [{ sans: ['alice.acme.test'] }, { sans: ['IP:not-an-ip'] }, { fingerprints: ['abc'] }, { subjectHeader: 'x y' }]) {
    assert.equal(v.safeParse(clientCert.schema, bad).success, false, JSON.stringify(bad));
  }
});

test('a route running client-cert is warned about where the TLS listener asks for no client certificate', () => {
  const drafts: DraftRow[] = [
    { kind: 'cluster', name: 'c', doc: { targets: ['127.0.0.1:1'] } },
    { kind: 'route', name: 'r', doc: { cluster: 'c', steps: [{ code: 'client-cert', settings: {} }] } },
  ];
  const tls = (clientCertificates: boolean) => ({ now: Date.now(), openKey: (s: string) => s, listening: true, clientCertificates });
  const without = compile({ tenant: 'default', published: [], drafts, tls: tls(false) });
  assert.equal(without.ok, true);
  assert.deepEqual(without.warnings.filter((w) => w.code === 'Compile.Tls.NoClientCertificates').map((w) => [w.name, w.pointer]), [['r', '/steps']]);
  const asked = compile({ tenant: 'default', published: [], drafts, tls: tls(true) });
  assert.equal(asked.warnings.some((w) => w.code === 'Compile.Tls.NoClientCertificates'), false);
});

test('a package step reads the verified certificate too, and switchyard/testing gives it one', async () => {
  const { defineStep: definePackageStep, v: pv } = await import('../../src/sdk/step.js');
  const { stepTester } = await import('../../src/sdk/testing.js');
  const who = definePackageStep({
    code: 'who',
    summary: 'sets x-who from the client certificate',
    settings: pv.strictObject({}),
    answers: [],
    ownedHeaders: () => ['x-who'],
    create: () => (flow) => {
      flow.setHeader('x-who', flow.req.clientCert?.subject ?? 'nobody');
      return undefined;
    },
  });
  const tester = stepTester(who, {});
  assert.equal((await tester.run({ path: '/', clientCert: ALICE })).upstream.headers['x-who'], 'CN=alice,O=Acme');
  assert.equal((await tester.run({ path: '/' })).upstream.headers['x-who'], 'nobody');
});
