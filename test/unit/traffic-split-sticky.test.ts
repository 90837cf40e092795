import { test } from 'node:test';
import assert from 'node:assert/strict';
import { trafficSplit } from '../../src/steps/traffic-split.js';
import { parseCookies } from '../../src/shared/cookie-header.js';
import type { Flow, StepEnv } from '../../src/steps/step.js';
import { freshState } from '../../src/steps/step-state.js';

/** The cluster traffic-split picks for a request with these Cookie lines (and X-User, when given). */
function pick(cookies: string[], user?: string): string | null {
  const run = trafficSplit.create!(
    { clusters: [{ cluster: 'a', weight: 1 }, { cluster: 'b', weight: 1 }, { cluster: 'c', weight: 1 }, { cluster: 'd', weight: 1 }], stickyCookie: 'session', stickyHeader: 'x-user' },
    { bucket: 'ts', tenant: 't', env: { random: () => { throw new Error('a sticky request drew at random'); } } as unknown as StepEnv, state: freshState },
  );
  const jar = parseCookies(cookies);
  const flow = { req: { header: (n: string) => (n === 'x-user' ? user : undefined), cookie: (n: string) => jar[n] }, cluster: null } as unknown as Flow;
  run(flow);
  return flow.cluster;
}

test('traffic-split reads stickyCookie as the cookie parser does: decoded, the first of a name, across Cookie lines; the header first', () => {
  const home = pick(['session=abc']);
  assert.ok(home !== null);
  // Regression: the raw value after a hand-written split on `;` was hashed, so one cookie
  // spelled two ways (`a%62c`, as a browser may send what a server set encoded) split one user over two versions.
  assert.equal(pick(['session=a%62c']), home);
  assert.equal(pick(['lang=en; session=abc; session=zzz']), home, 'the first of a repeated name');
  assert.equal(pick(['lang=en', 'session=abc']), home, 'a second Cookie line');
  const users = new Set(['u1', 'u2', 'u3', 'u4', 'u5', 'u6', 'u7', 'u8'].map((u) => pick(['session=abc'], u)));
  assert.ok(users.size > 1, 'the header wins over the cookie');
  assert.throws(() => pick(['xsession=abc']), /drew at random/, 'another cookie is no sticky value');
});
