/**
 * The console's Explain view and the Publish view's Diff, in Chromium against a real gateway:
 * the route highlighted as the winner is the one the data port serves, each loser says why;
 * the diff shows an edited route's changed field with old and new value, a new draft as a
 * create and a staged delete as a delete.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { startGateway, type Gateway } from './helpers/gateway.js';
import { ROOT_KEY, deleteEntity, publish, setEntity } from './helpers/admin.js';
import { request } from './helpers/http.js';
import { startUpstream } from './helpers/upstream.js';
import { signedInPage } from './helpers/browser.js';
import { candidateRows, diffRows, explainIn, stepRows } from './helpers/explain-and-diff-pages.js';
import { BOUNDED } from './helpers/wait.js';

const KEY = { id: 'app', sha256: createHash('sha256').update('good-key').digest('hex') };
const USERS = 'http://api.example.com/api/v1/users?id=1';

/** Overlapping routes: one prefix split by method and order, a longer prefix bound to a host, one elsewhere. */
const ROUTES: [string, Record<string, unknown>][] = [
  ['api', { cluster: 'backend', pathPrefix: '/api' }],
  ['api-v1', { cluster: 'backend', pathPrefix: '/api/v1', steps: [{ code: 'method-restriction', settings: { allow: ['GET', 'POST'] } }, { code: 'key-auth', settings: { keys: [KEY] } }] }],
  ['api-v1-writes', { cluster: 'backend', pathPrefix: '/api/v1', methods: ['POST', 'PUT'], order: 1 }],
  ['partner', { cluster: 'backend', pathPrefix: '/api/v1/users', hosts: ['partner.example'] }],
  ['admin', { cluster: 'backend', pathPrefix: '/admin' }],
];

interface Answer {
  candidates: { route: string }[];
  route: { terminal: { steps: { verdict?: string }[] } };
  upstream?: { target: string } | null;
}
/** The server's own answer for GET USERS, to hold the drawing to. */
const explainApi = async (gw: Gateway, headers: Record<string, string>) =>
  (await request(`${gw.adminUrl}/api/v1/default/explain`, { method: 'POST', token: gw.tokens.root, body: { method: 'GET', url: USERS, headers } })).json as Answer;

test('explain highlights the route the data port serves and says why the others lose; diff shows what a publish changes', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await setEntity(gw, 'cluster', 'backend', { targets: [up.target] });
  for (const [name, doc] of ROUTES) await setEntity(gw, 'route', name, doc);
  await publish(gw);
  const { page } = await signedInPage(t, gw.adminUrl, gw.tokens.root!);
  const text = async (testId: string) => (await page.getByTestId(testId).textContent()) ?? '';

  await page.getByTestId('nav-explain').click();
  await explainIn(page, 'GET', USERS, 'x-api-key: wrong');
  const rows = await candidateRows(page);
  assert.deepEqual(rows.filter((r) => r.winner).map((r) => r.route), ['api-v1'], JSON.stringify(rows));
  assert.equal(await text('explain-winner'), 'route api-v1');
  const why = Object.fromEntries(rows.map((r) => [r.route, `${r.outcome}: ${r.reason}`]));
  assert.match(why.api!, /^outranked: .*route api-v1 ranks before it/);
  assert.match(why['api-v1-writes']!, /^method: GET is not among POST, PUT/);
  assert.match(why.partner!, /^host: the host "api\.example\.com" is not among partner\.example/);
  assert.match(why.admin!, /^path: the path does not start with "\/admin"/);
  const wrong = await explainApi(gw, { 'x-api-key': 'wrong' });
  assert.deepEqual(rows.map((r) => r.route), wrong.candidates.map((c) => c.route), 'rank order as the server gives it');
  assert.equal(rows[0]!.route, 'api-v1-writes', 'the order-1 route ranks first, whatever its outcome');
  // The winner's chain in run order, with its failure strategy and, from servers that judge steps, each verdict.
  const steps = await stepRows(page);
  assert.deepEqual(steps.map((s) => s.code), ['method-restriction', 'key-auth']);
  assert.deepEqual(steps.map((s) => s.verdict), wrong.route.terminal.steps.map((s) => s.verdict ?? null));
  assert.match(await text('step-1'), /FailFast/);
  if (steps[1]!.verdict !== null) assert.match(await text('step-1'), /refuses \(401 Svc\.Data\.Unauthenticated\)/);
  // The data port agrees: only api-v1 has key-auth, and the wrong key is refused there.
  const served = await request(`${gw.dataUrl}/api/v1/users?id=1`, { headers: { host: 'api.example.com', 'x-api-key': 'wrong' } });
  assert.equal(served.status, 401, served.text);

  // With the right key, servers that pick the target name it and the path the upstream receives.
  await explainIn(page, 'GET', USERS, 'x-api-key: good-key');
  if ((await explainApi(gw, { 'x-api-key': 'good-key' })).upstream) {
    assert.ok((await text('explain-upstream')).includes(up.target));
    assert.equal(await text('explain-upstream-path'), '/api/v1/users?id=1');
  }

  // Another method moves the highlight: POST goes to the order-1 route, api-v1 is outranked.
  await explainIn(page, 'POST', '/api/v1/users');
  const post = await candidateRows(page);
  assert.deepEqual(post.filter((r) => r.winner).map((r) => r.route), ['api-v1-writes']);
  assert.equal(post.find((r) => r.route === 'api-v1')?.outcome, 'outranked');
  assert.equal(await page.getByTestId('explain-steps').count(), 0, 'a route without steps lists none');

  // Drafts: two edited routes, a new one, a staged delete.
  await setEntity(gw, 'route', 'api', { cluster: 'backend', pathPrefix: '/api2' });
  await setEntity(gw, 'route', 'partner', { cluster: 'backend', pathPrefix: '/api/v1/users', hosts: ['partner.example', 'b2b.example'] });
  await setEntity(gw, 'route', 'new-route', { pathPrefix: '/new', directResponse: { statusCode: 204 } });
  await deleteEntity(gw, 'route', 'admin');

  // The drafts checkbox reaches the server: the new route exists only there.
  await explainIn(page, 'GET', '/new/x', '', true);
  assert.equal(await text('explain-winner'), 'route new-route');
  await explainIn(page, 'GET', '/new/x', '', false);
  assert.match(await text('explain-refused'), /no route matches/);

  await page.getByTestId('nav-publish').click();
  // Unchanged entities are only counted; an array of another length changes as a whole.
  assert.deepEqual(await diffRows(page), [
    { entity: 'route/admin', action: 'delete', changes: [] },
    { entity: 'route/api', action: 'update', changes: [['/pathPrefix', '"/api"', '"/api2"']] },
    { entity: 'route/new-route', action: 'create', changes: [] },
    { entity: 'route/partner', action: 'update', changes: [['/hosts', '["partner.example"]', '["partner.example","b2b.example"]']] },
  ]);
  assert.equal(await text('diff-counts'), '1 to create, 2 to update, 1 to delete; 3 unchanged.');
});
