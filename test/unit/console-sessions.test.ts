import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConsoleSessions } from '../../src/admin/oidc/console-sessions.js';
import { authenticateCounted } from '../../src/admin/call-gates.js';
import { operationById } from '../../src/admin/contract.js';
import { AuthThrottle } from '../../src/admin/auth-throttle.js';
import { SvcError } from '../../src/shared/errors.js';
import { masksOf } from '../../src/admin/scopes.js';
import type { Identity } from '../../src/admin/identity.js';

const who = (id: string): Identity => ({ id, kind: 'system', tenant: null, scopes: ['*'], masks: masksOf(['*']), session: { name: id } });

test('a session resolves by its id until it expires or is ended; ids are random and held only as digests', () => {
  let now = 1_000;
  const sessions = new ConsoleSessions(10, () => now);
  const a = sessions.create(who('oidc:a'), 2_000, 'id-token-a');
  const b = sessions.create(who('oidc:b'), 5_000, null);
  assert.notEqual(a, b);
  assert.match(a, /^[A-Za-z0-9_-]{43}$/, '32 random bytes, base64url');
  assert.equal(sessions.resolveSession(a)?.id, 'oidc:a');
  assert.equal(sessions.resolveSession('not-' + a), null);
  assert.equal(JSON.stringify([...(sessions as unknown as { sessions: Map<string, unknown> }).sessions.keys()]).includes(a), false, 'the map holds no cookie value');

  now = 2_000;
  assert.equal(sessions.resolveSession(a), null, 'expired at its expiry');
  assert.deepEqual(sessions.end(b), { idToken: null });
  assert.equal(sessions.resolveSession(b), null, 'ended');
  assert.equal(sessions.end(b), null, 'ending twice finds nothing');
});

test('the count is bounded: a new session past max ends the oldest; expired ones go first', () => {
  let now = 0;
  const sessions = new ConsoleSessions(2, () => now);
  const first = sessions.create(who('1'), 100, null);
  const second = sessions.create(who('2'), 1_000, null);
  const third = sessions.create(who('3'), 1_000, null);
  assert.equal(sessions.size, 2);
  assert.equal(sessions.resolveSession(first), null, 'the oldest made room');
  assert.equal(sessions.resolveSession(second)?.id, '2');
  now = 1_000; // both expired: swept, nothing live is evicted for the new one
  const fourth = sessions.create(who('4'), 2_000, null);
  assert.equal(sessions.size, 1);
  assert.equal(sessions.resolveSession(fourth)?.id, '4');
  assert.equal(sessions.resolveSession(third), null);
});

test('the auth gate: a bearer token wins; a session cookie counts only with the console header (CSRF)', async () => {
  const sessions = new ConsoleSessions(10);
  const id = sessions.create(who('oidc:alice'), Date.now() + 60_000, null);
  const op = operationById('whoami');
  const t = new AuthThrottle({ burst: 20, perSecond: 1 });
  const root: Identity = { ...who('root'), session: undefined };
  const resolvers = [{ resolve: (s: string) => (s === 'root-token' ? root : null) }];
  const code = async (fn: () => Promise<unknown>) => {
    try {
      await fn();
      return null;
    } catch (err) {
      return (err as SvcError).code;
    }
  };

  assert.equal((await authenticateCounted(op, undefined, 'p', resolvers, t, { id, consoleHeader: true, resolver: sessions }))?.id, 'oidc:alice');
  assert.equal((await authenticateCounted(op, 'Bearer root-token', 'p', resolvers, t, { id, consoleHeader: true, resolver: sessions }))?.id, 'root', 'the token, not the cookie');
  assert.equal(await code(() => authenticateCounted(op, undefined, 'p', resolvers, t, { id, consoleHeader: false, resolver: sessions })), 'Svc.Auth.Unauthenticated');
  assert.equal(await code(() => authenticateCounted(op, undefined, 'p', resolvers, t, { id: 'forged', consoleHeader: true, resolver: sessions })), 'Svc.Auth.Unauthenticated');
  assert.equal(t.unauthenticated, 2, 'each refused cookie counts');
  assert.equal((await authenticateCounted(operationById('health'), undefined, 'p', resolvers, t, { id: 'forged', consoleHeader: false, resolver: sessions })), null, 'auth none: the cookie is not looked at');
});

test('the cookies: the session Strict and HttpOnly on the admin API, the sign-in Lax (the provider redirects back), Secure behind https', async () => {
  const { sessionCookie, signInCookie, clearedSessionCookie } = await import('../../src/admin/oidc/console-cookies.js');
  const attrs = (line: string) => line.split('; ').slice(1).sort();
  assert.deepEqual(attrs(sessionCookie('abc', 600, true)), ['HttpOnly', 'Max-Age=600', 'Path=/api/v1/', 'SameSite=Strict', 'Secure']);
  assert.deepEqual(attrs(sessionCookie('abc', 600, false)), ['HttpOnly', 'Max-Age=600', 'Path=/api/v1/', 'SameSite=Strict']);
  assert.deepEqual(attrs(signInCookie('x', false)), ['HttpOnly', 'Max-Age=600', 'Path=/api/v1/sys/oidc/', 'SameSite=Lax']);
  assert.match(clearedSessionCookie(false), /^switchyard_session=; Max-Age=0; Path=\/api\/v1\//);
});
