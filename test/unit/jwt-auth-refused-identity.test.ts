import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as v from 'valibot';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { jwtAuth } from '../../src/steps/identity/jwt-auth.js';
import { TestFlow } from '../../src/sdk/test-flow.js';
import type { StepContext } from '../../src/steps/step.js';

// Under failureStrategy Continue the route goes on after a refusal: the refused token's identity must not go upstream.
test('jwt-auth: a valid token refused for a scope or a claim sets neither the subject header, vars.consumer nor mapped headers', async () => {
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' };
  const settings = v.parse(jwtAuth.schema, { algorithms: ['ES256'], jwks: { keys: [jwk] }, requiredScopes: ['orders:read'], requiredClaims: { tier: 'gold' }, claims: { email: 'x-user-email' } });
  const run = jwtAuth.create!(settings, { bucket: 'b', tenant: 'default', env: {} } as unknown as StepContext);
  const owned = jwtAuth.ownedHeaders!(settings);
  const sign = (claims: Record<string, unknown>) => new SignJWT({ sub: 'ann', email: 'ann@example.test', exp: Math.floor(Date.now() / 1000) + 300, ...claims }).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).sign(privateKey);
  const attempt = async (claims: Record<string, unknown>) => {
    const flow = new TestFlow({ path: '/', headers: { authorization: `Bearer ${await sign(claims)}` } }, owned);
    // Twice: the first verifies, the second is answered from the verified-token cache.
    const outcomes = [await run(flow), await run(flow)];
    return { outcomes, flow, headers: Object.fromEntries(flow.preview().headers) };
  };
  for (const claims of [{ scope: 'orders:write', tier: 'gold' }, { scope: 'orders:read', tier: 'bronze' }]) {
    const { outcomes, flow, headers } = await attempt(claims);
    for (const o of outcomes) assert.equal((o as { status?: number } | undefined)?.status, 403, JSON.stringify(claims));
    assert.equal(headers['x-consumer-id'], undefined);
    assert.equal(headers['x-user-email'], undefined);
    assert.equal(flow.vars.consumer, undefined);
  }
  const { outcomes, flow, headers } = await attempt({ scope: 'orders:read', tier: 'gold' });
  assert.deepEqual(outcomes, [undefined, undefined], 'passes');
  assert.equal(headers['x-consumer-id'], 'ann');
  assert.equal(headers['x-user-email'], 'ann@example.test');
  assert.equal(flow.vars.consumer, 'ann');
});
