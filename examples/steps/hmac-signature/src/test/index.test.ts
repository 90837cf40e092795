import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { checkSettings, stepTester } from 'switchyard/testing';
import hmac, { sign, signedString } from '../index.js';

const KEY = 'partner-shared-key';
const secrets = { PARTNER_HMAC_KEY: KEY };
const now = () => String(Math.floor(Date.now() / 1000));

/** A request signed as a partner would sign it. */
function signed(method: string, target: string, body = '', opts: { ts?: string; key?: string; encoding?: 'hex' | 'base64' } = {}) {
  const ts = opts.ts ?? now();
  const signature = sign(opts.key ?? KEY, signedString(method, target, ts, Buffer.from(body))).toString(opts.encoding ?? 'hex');
  return { method, path: target, headers: { 'x-signature': signature, 'x-timestamp': ts }, body };
}

test('a correctly signed request passes, hex or base64, with its query and body', async () => {
  const t = stepTester(hmac, { secretEnv: 'PARTNER_HMAC_KEY' }, { secrets });
  const get = await t.run(signed('GET', '/orders?id=7&page=2'));
  assert.equal(get.answered, null);
  assert.equal(get.upstream.path, '/orders');
  const post = await t.run(signed('POST', '/orders', '{"item":"tea"}', { encoding: 'base64' }));
  assert.equal(post.answered, null);
});

test('a request without signature or timestamp is refused 401 Hmac.MissingSignature', async () => {
  const t = stepTester(hmac, { secretEnv: 'PARTNER_HMAC_KEY' }, { secrets });
  const r = await t.run({ path: '/orders' });
  assert.equal(r.answered?.status, 401);
  assert.deepEqual(r.answered?.json(), { code: 'Hmac.MissingSignature', message: 'The signature or timestamp header is missing', traceId: 'test-trace' });
  const noTs = signed('GET', '/orders');
  const r2 = await t.run({ ...noTs, headers: { 'x-signature': noTs.headers['x-signature'] } });
  assert.equal(r2.answered?.json<{ code: string }>().code, 'Hmac.MissingSignature');
});

test('a wrong key, a changed body, path or query, or a malformed signature is 401 Hmac.BadSignature', async () => {
  const t = stepTester(hmac, { secretEnv: 'PARTNER_HMAC_KEY' }, { secrets });
  const code = async (req: Parameters<typeof t.run>[0]) => (await t.run(req)).answered?.json<{ code: string }>().code;
  assert.equal(await code(signed('POST', '/orders', 'a', { key: 'other' })), 'Hmac.BadSignature');
  assert.equal(await code({ ...signed('POST', '/orders', 'a'), body: 'b' }), 'Hmac.BadSignature');
  assert.equal(await code({ ...signed('GET', '/orders?id=7'), path: '/orders?id=8' }), 'Hmac.BadSignature');
  assert.equal(await code({ ...signed('GET', '/orders'), method: 'DELETE' }), 'Hmac.BadSignature');
  const ok = signed('GET', '/orders');
  assert.equal(await code({ ...ok, headers: { ...ok.headers, 'x-signature': 'zz' } }), 'Hmac.BadSignature');
  assert.equal(await code({ ...ok, headers: { ...ok.headers, 'x-timestamp': 'yesterday' } }), 'Hmac.BadSignature');
});

test('a replayed request, its timestamp older than maxSkewSeconds, is 401 Hmac.Expired; so is one from the future', async () => {
  const t = stepTester(hmac, { secretEnv: 'PARTNER_HMAC_KEY', maxSkewSeconds: 60 }, { secrets });
  const old = String(Math.floor(Date.now() / 1000) - 120);
  const r = await t.run(signed('GET', '/orders', '', { ts: old }));
  assert.equal(r.answered?.json<{ code: string }>().code, 'Hmac.Expired');
  const ahead = String(Math.floor(Date.now() / 1000) + 120);
  assert.equal((await t.run(signed('GET', '/orders', '', { ts: ahead }))).answered?.status, 401);
  const fresh = String(Math.floor(Date.now() / 1000) - 30);
  assert.equal((await t.run(signed('GET', '/orders', '', { ts: fresh }))).answered, null);
});

test('a body larger than maxBodyBytes is 413 Hmac.BodyTooLarge', async () => {
  const t = stepTester(hmac, { secretEnv: 'PARTNER_HMAC_KEY', maxBodyBytes: 8 }, { secrets });
  const r = await t.run(signed('POST', '/orders', '0123456789'));
  assert.equal(r.answered?.status, 413);
  assert.equal(r.answered?.json<{ code: string }>().code, 'Hmac.BodyTooLarge');
});

test('an unset key fails the request (the gateway answers 500), never lets it through', async () => {
  const t = stepTester(hmac, { secretEnv: 'PARTNER_HMAC_KEY' }, { secrets: {} });
  await assert.rejects(t.run(signed('GET', '/orders')), /PARTNER_HMAC_KEY is not set/);
});

test('settings: the example fits; a missing secretEnv or a bad header name are refused where publish would point', () => {
  assert.deepEqual(checkSettings(hmac, hmac.example), []);
  assert.deepEqual(
    checkSettings(hmac, { header: 'x sig' }).map((i) => i.pointer),
    ['/settings/secretEnv', '/settings/header'],
  );
});

test("the README's openssl recipe signs as the step checks", { skip: !hasOpenssl() }, async () => {
  const ts = now();
  const body = '{"item":"tea"}';
  const bodyHash = execFileSync('openssl', ['dgst', '-sha256', '-hex'], { input: body, encoding: 'utf8' }).trim().split(' ').pop()!;
  const message = `POST\n/orders?id=7\n${ts}\n${bodyHash}`;
  const sig = execFileSync('openssl', ['dgst', '-sha256', '-hmac', KEY, '-hex'], { input: message, encoding: 'utf8' }).trim().split(' ').pop()!;
  const t = stepTester(hmac, { secretEnv: 'PARTNER_HMAC_KEY' }, { secrets });
  const r = await t.run({ method: 'POST', path: '/orders?id=7', headers: { 'x-signature': sig, 'x-timestamp': ts }, body });
  assert.equal(r.answered, null);
});

function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
