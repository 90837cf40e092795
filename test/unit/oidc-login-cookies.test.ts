import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { parseSetCookie } from 'cookie';
import { MAX_COOKIE_BYTES, SealedCookie, setCookieLine } from '../../src/steps/identity/sealed-cookie.js';
import { safeReturnTarget } from '../../src/steps/identity/return-target.js';
import * as v from 'valibot';
import { Sessions, cookieBinding, type Session, type Tokens } from '../../src/steps/identity/oidc-session.js';
import { OIDC_LOGIN_EXAMPLE, OidcLoginSchema } from '../../src/steps/identity/oidc-login-settings.js';
import { OidcLoginFlow } from '../../src/steps/identity/oidc-login-flow.js';
import type { Flow } from '../../src/steps/step.js';

const key = randomBytes(32);
const later = Date.now() / 1000 + 600;

test('a sealed cookie opens to what was sealed, and its text shows nothing of it', () => {
  const c = new SealedCookie<{ sub: string }>(key, 'sy_session', 'default/app#/steps/0');
  const text = c.seal({ sub: 'alice@example.test' }, later);
  assert.deepEqual(c.open(text), { sub: 'alice@example.test' });
  assert.equal(text.includes('alice'), false);
  assert.match(text, /^sy1\.[A-Za-z0-9_-]+$/, 'cookie-safe characters only');
  assert.notEqual(c.seal({ sub: 'alice@example.test' }, later), text, 'a fresh IV each time');
});

test('a tampered, truncated or extended cookie does not open', () => {
  const c = new SealedCookie<{ sub: string }>(key, 'sy_session', 'b');
  const text = c.seal({ sub: 'alice' }, later);
  // Not the last character: some of its bits may be base64url padding, which decodes to the same bytes.
  for (let i = 4; i < text.length - 1; i += 7) {
    const flipped = text.slice(0, i) + (text[i] === 'A' ? 'B' : 'A') + text.slice(i + 1);
    assert.equal(c.open(flipped), null, `byte ${i} flipped`);
  }
  assert.equal(c.open(text.slice(0, -2)), null);
  assert.equal(c.open(`${text}AA`), null);
  assert.equal(c.open('sy1.AAAA'), null, 'shorter than IV and tag');
  assert.equal(c.open(''), null);
  assert.equal(c.open(undefined), null);
  assert.equal(c.open('x'.repeat(MAX_COOKIE_BYTES + 1)), null);
});

test('a cookie sealed for another name, binding or key does not open; an expired one neither', () => {
  const c = new SealedCookie<{ sub: string }>(key, 'sy_session', 'default/app');
  const text = c.seal({ sub: 'alice' }, later);
  assert.equal(new SealedCookie(key, 'other', 'default/app').open(text), null, 'another cookie name');
  assert.equal(new SealedCookie(key, 'sy_session', 'default/admin').open(text), null, 'another route');
  assert.equal(new SealedCookie(key, 'sy_session', 'acme/app').open(text), null, 'another tenant');
  assert.equal(new SealedCookie(randomBytes(32), 'sy_session', 'default/app').open(text), null, 'another key');
  const expired = c.seal({ sub: 'alice' }, Date.now() / 1000 - 1);
  assert.equal(c.open(expired), null);
  assert.deepEqual(c.open(expired, Date.now() / 1000 - 2), { sub: 'alice' }, 'it opened before it expired');
});

test('Set-Cookie lines: HttpOnly, SameSite=Lax, the path, Secure only over TLS; Max-Age 0 clears', () => {
  const plain = parseSetCookie(setCookieLine('sy_session', 'v', 3600, { path: '/', secure: false }));
  assert.equal(plain.httpOnly, true);
  assert.equal(plain.sameSite, 'lax');
  assert.equal(plain.path, '/');
  assert.equal(plain.maxAge, 3600);
  assert.equal(plain.secure, undefined);
  assert.equal(parseSetCookie(setCookieLine('sy_session', 'v', 60, { path: '/cb', secure: true })).secure, true);
  const cleared = parseSetCookie(setCookieLine('sy_session', '', 0, { path: '/', secure: false }));
  assert.equal(cleared.maxAge, 0);
  assert.equal(cleared.value, '');
});

test('return targets: a path on this host only', () => {
  for (const ok of ['/', '/orders?page=2', '/a/b%2Fc', '/x?next=https://other.example']) assert.equal(safeReturnTarget(ok), ok, ok);
  for (const bad of ['//evil.example', '/\\evil.example', 'https://evil.example/', 'javascript:alert(1)', 'evil.example', '', '/\t/evil.example', '/a\r\nSet-Cookie: x=1', '/a\\b', '/caf\u00e9', `/${'a'.repeat(2048)}`]) {
    assert.equal(safeReturnTarget(bad), null, JSON.stringify(bad));
  }
});

test('a session keeps only the mapped and required claims, and fits a cookie by dropping the ID token first', () => {
  const cookie = new SealedCookie<Session>(key, 'sy_session', 'b');
  const sessions = new Sessions(cookie, ['email', 'groups'], 3600);
  const tokens = (idToken: string, claims: Record<string, unknown>): Tokens =>
    ({ access_token: 'at', token_type: 'bearer', id_token: idToken, refresh_token: 'rt', expires_in: 300, claims: () => claims, expiresIn: () => 300 }) as unknown as Tokens;
  const now = 1_000_000;
  const s = sessions.fromTokens(tokens('id.small', { sub: 'alice', email: 'a@x', groups: ['g'], address: 'far away' }), now)!;
  assert.deepEqual(s, { s: 'alice', c: { email: 'a@x', groups: ['g'] }, x: now + 300, m: now + 3600, r: 'rt', i: 'id.small' });
  assert.equal(sessions.seal(s)!.session.i, 'id.small');
  const big = sessions.fromTokens(tokens(`id.${'x'.repeat(3500)}`, { sub: 'alice', email: 'a@x' }), now)!;
  const sealed = sessions.seal(big)!;
  assert.equal(sealed.session.i, undefined, 'the ID token did not fit');
  assert.equal(sealed.session.r, 'rt', 'the refresh token did');
  assert.ok(sealed.value.length + 'sy_session'.length + 1 <= MAX_COOKIE_BYTES);
  // A refresh keeps the subject and the session's end; another subject is refused.
  const refreshed = sessions.fromTokens(tokens('id.2', { sub: 'alice', email: 'new@x' }), now + 200, s)!;
  assert.equal(refreshed.m, s.m);
  assert.equal(refreshed.c.email, 'new@x');
  assert.equal(sessions.fromTokens(tokens('id.3', { sub: 'mallory' }), now + 200, s), null);
});

test('the cookie binding: the tenant, the place and the identity settings; not the other settings', () => {
  const settings = (extra: Record<string, unknown> = {}) => v.parse(OidcLoginSchema, { ...OIDC_LOGIN_EXAMPLE, ...extra });
  // The compiler's bucket: `<tenant>/<route>#<pointer>:<code>@<canonical settings>`.
  const bucket = (route: string, s: object) => `default/${route}#/steps/0:oidc-login@${JSON.stringify(s)}`;
  const base = settings();
  const b = cookieBinding(base, 'default', bucket('app', base));
  const slower = settings({ providerTimeoutMs: 9000, refreshBeforeSeconds: 30 });
  assert.equal(cookieBinding(slower, 'default', bucket('app', slower)), b, 'timeouts do not sign anyone out');
  assert.notEqual(cookieBinding(base, 'default', bucket('admin', base)), b, 'another route');
  assert.notEqual(cookieBinding(base, 'acme', bucket('app', base).replace('default/', 'acme/')), b, 'another tenant');
  const stricter = settings({ requiredClaims: { groups: 'staff' } });
  assert.notEqual(cookieBinding(stricter, 'default', bucket('app', stricter)), b, 'a required claim added');
  const remapped = settings({ claims: { email: 'x-email' } });
  assert.notEqual(cookieBinding(remapped, 'default', bucket('app', remapped)), b, 'another mapping');
});

// Regression: behind a TLS-terminating proxy (the gateway's own port plain http) the cookies went without Secure.
test('oidc-login cookies are Secure when the request came over TLS or redirectUri is https; only then', () => {
  const flowFor = (redirectUri: string) =>
    new OidcLoginFlow(v.parse(OidcLoginSchema, { ...OIDC_LOGIN_EXAMPLE, redirectUri }), null as never, null as never, null as never, () => null as never, null as never, 'default');
  const line = (flow: OidcLoginFlow, scheme: 'http' | 'https') => {
    const request = { req: { scheme } } as unknown as Flow;
    return parseSetCookie(setCookieLine('sy_session', 'v', 60, flow.scope(request)));
  };
  const behindProxy = flowFor('https://app.example.com/oauth/callback');
  const plain = flowFor('http://127.0.0.1:8080/oauth/callback');
  for (const [flow, scheme, secure] of [[behindProxy, 'http', true], [behindProxy, 'https', true], [plain, 'https', true], [plain, 'http', false]] as const) {
    const c = line(flow, scheme);
    assert.equal(c.secure ?? false, secure, `${String(flow === plain ? 'http' : 'https')} redirectUri over ${scheme}`);
    assert.equal(c.httpOnly, true);
    assert.equal(c.sameSite, 'lax');
  }
});
