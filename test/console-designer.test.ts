/**
 * The orchestration designer in the console, end to end in Chromium: build a chain with
 * the palette, the generated settings forms, links and a group; Save writes the draft
 * (with canvas positions) that the CLI reads back and a route can bind; a chain written
 * by the CLI opens with its nodes and links; dry-run issues land on the node they
 * concern. Also keeps the designer screenshot docs/console.md shows.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startGateway, type Gateway } from './helpers/gateway.js';
import { ROOT_KEY, dryRun, getEntity, publish, setEntity } from './helpers/admin.js';
import { runCli } from './helpers/cli.js';
import { fileURLToPath } from 'node:url';
import { request } from './helpers/http.js';
import { startUpstream } from './helpers/upstream.js';
import { screenshot, signedInPage } from './helpers/browser.js';
import { BOUNDED } from './helpers/wait.js';
import type { Json } from './helpers/json.js';

const GATEKEEPER = fileURLToPath(new URL('./fixtures/step-packages/gatekeeper/', import.meta.url));

const cliFlags = (gw: Gateway) => ['--admin', gw.adminUrl, '--token', gw.tokens.root!];

/** `config get orch <name>` through the CLI, asserting it succeeded. */
async function cliGetOrch(gw: Gateway, name: string): Promise<Json> {
  const r = await runCli(['config', 'get', 'orch', name, ...cliFlags(gw)]);
  assert.equal(r.code, 0, `config get orch ${name}: ${r.stdout} ${r.stderr}`);
  assert.ok(r.json, `config get printed JSON: ${r.stdout}`);
  return r.json;
}

/** Chains view → the chain's editor (new or existing) → "Open in designer", loaded. */
async function openDesigner(page: Page, name: string, existing: boolean): Promise<void> {
  await page.getByTestId('nav-chains').click();
  if (existing) {
    await page.getByTestId(`entity-${name}`).click();
  } else {
    await page.getByTestId('new-name').fill(name);
    await page.getByTestId('new-entity').click();
  }
  await page.getByTestId('open-designer').click();
  await page.getByTestId('designer').waitFor();
  assert.equal(await page.getByTestId('designer-name').textContent(), name);
  await page.getByTestId('designer-source').waitFor(); // the chain and the palette are loaded
}

/** Clicks a palette item; returns the new node's id (shown in the side panel at once). */
async function addStep(page: Page, code: string): Promise<string> {
  const before = await page.locator('[data-testid^="node-step-"]').count();
  await page.getByTestId(`palette-step-${code}`).click();
  const shown = page.getByTestId('panel-node-id').filter({ hasText: new RegExp(`^${code}-\\d+$`) });
  await shown.waitFor();
  const id = (await shown.textContent())!;
  await page.getByTestId(`node-${id}`).waitFor();
  assert.equal(await page.getByTestId(`node-step-${id}`).textContent(), code);
  assert.equal(await page.locator('[data-testid^="node-step-"]').count(), before + 1);
  return id;
}

/** Waits until the side panel shows node `id`. */
async function panelShows(page: Page, id: string): Promise<void> {
  await page.getByTestId('panel-node-id').filter({ hasText: new RegExp(`^${id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) }).waitFor();
}

/** Fills a field of the generated settings form of the node in the side panel. */
async function setting(page: Page, prop: string, value: string): Promise<void> {
  await page.getByTestId('node-panel').getByTestId(`setting-${prop}`).fill(value);
}

async function save(page: Page): Promise<void> {
  await page.getByTestId('designer-save').click();
  await page.getByTestId('designer-saved').waitFor();
  assert.equal(await page.getByTestId('designer-error').count(), 0);
  assert.equal(await page.getByTestId('designer-dirty').count(), 0);
}

const hasCanvas = (n: Json) => typeof n.canvas?.x === 'number' && typeof n.canvas?.y === 'number';
const withoutCanvas = ({ canvas: _c, ...rest }: Json) => rest;

test('designer: build a chain with a link and a group, set rate-limit through the form, save, bind it from a route: the data port limits', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  const { page } = await signedInPage(t, gw.adminUrl, gw.tokens.root!);
  await openDesigner(page, 'edge', false);
  assert.equal(await page.getByTestId('designer-source').textContent(), 'new chain');
  await page.getByTestId('designer-empty').waitFor();

  // four nodes from the palette, settings filled in the generated form right after each click
  const rid = await addStep(page, 'request-id');
  assert.equal(rid, 'request-id-1');
  const cors = await addStep(page, 'cors');
  await setting(page, 'origins', 'https://app.example.com');
  const hdr = await addStep(page, 'request-headers');
  await setting(page, 'set', '{"x-chain": "designer"}');
  const rl = await addStep(page, 'rate-limit');
  assert.equal(rl, 'rate-limit-1');
  await setting(page, 'requestsPerSecond', '1');
  await setting(page, 'burst', '2');
  assert.equal(await page.getByTestId('node-panel').getByTestId('setting-burst-error').count(), 0);

  // cors + request-headers: a parallel group, merge all
  await page.getByTestId(`select-${cors}`).check();
  await page.getByTestId(`select-${hdr}`).check();
  await page.getByTestId('group-merge').selectOption('all');
  await page.getByTestId('group-selected').click();
  await page.getByTestId('group-group-1').waitFor();
  assert.match((await page.getByTestId('group-group-1').textContent()) ?? '', /merge all/);
  // the new group is selected: link it to the rate-limit node
  await page.getByTestId('group-panel').waitFor();
  await page.getByTestId('link-target').selectOption(rl);
  await page.getByTestId('add-link').click();
  // request-id-1 (a fresh selection by checkbox) → the group
  await page.getByTestId(`select-${rid}`).check();
  await panelShows(page, rid);
  await page.getByTestId('link-target').selectOption('group-1');
  await page.getByTestId('add-link').click();
  assert.equal(await page.getByTestId('designer-notice').count(), 0);
  await page.locator('.react-flow__edge').nth(1).waitFor();
  assert.equal(await page.locator('.react-flow__edge').count(), 2);

  // lay it out left to right along the links, then Save
  await page.getByTestId('designer-layout').click();
  await page.getByTestId('designer-dirty').waitFor();
  await save(page);

  // the CLI reads the document back: every node placed on the canvas
  const view = await cliGetOrch(gw, 'edge');
  const doc = view.draft?.doc;
  assert.ok(doc, `a draft: ${JSON.stringify(view)}`);
  assert.equal(view.published, null);
  assert.deepEqual(
    doc.nodes.map((n: Json) => n.id),
    [rid, cors, hdr, rl],
  );
  for (const n of doc.nodes) assert.ok(hasCanvas(n), `canvas on ${n.id}: ${JSON.stringify(n)}`);
  const at = Object.fromEntries(doc.nodes.map((n: Json) => [n.id, n.canvas]));
  assert.ok(at[rid].x < at[cors].x && at[cors].x === at[hdr].x && at[hdr].x < at[rl].x, `layered along the links: ${JSON.stringify(at)}`);
  assert.ok(at[cors].y < at[hdr].y, `group members stacked: ${JSON.stringify(at)}`);
  assert.ok(hasCanvas(doc.groups[0]), `canvas on the group: ${JSON.stringify(doc.groups[0])}`);
  assert.deepEqual(doc.nodes.map(withoutCanvas), [
    { id: rid, step: 'request-id' },
    { id: cors, step: 'cors', settings: { origins: ['https://app.example.com'] } },
    { id: hdr, step: 'request-headers', settings: { set: { 'x-chain': 'designer' } } },
    { id: rl, step: 'rate-limit', settings: { requestsPerSecond: 1, burst: 2 } },
  ]);
  assert.deepEqual(doc.links, [
    { from: 'group-1', to: rl },
    { from: rid, to: 'group-1' },
  ]);
  assert.deepEqual(doc.groups.map(withoutCanvas), [{ id: 'group-1', nodes: [cors, hdr], merge: 'all' }]);

  // the dry-run in the designer passes
  await page.getByTestId('designer-dry-run').click();
  await page.getByTestId('designer-dry-run-ok').waitFor();
  assert.equal(await page.locator('[data-testid^="node-issue-"]').count(), 0);
  await screenshot(page, 'designer');

  // bind it from a route, publish: the data port runs the chain
  await setEntity(gw, 'cluster', 'up', { targets: [up.target] });
  await setEntity(gw, 'route', 'rl', { cluster: 'up', pathPrefix: '/rl', steps: [{ code: 'orch', settings: { ref: 'edge' } }] });
  await publish(gw);

  const first = await request(`${gw.dataUrl}/rl/a`);
  const second = await request(`${gw.dataUrl}/rl/b`);
  const third = await request(`${gw.dataUrl}/rl/c`);
  assert.equal(first.status, 200, first.text);
  assert.equal(second.status, 200, second.text);
  assert.equal(first.headers['ratelimit-limit'], '2');
  assert.ok(first.headers['x-request-id'], 'request-id echoes the id');
  assert.equal(first.json.headers['x-chain'], 'designer', 'request-headers (in the group) ran');
  assert.equal(first.json.headers['x-request-id'], first.headers['x-request-id']);
  assert.equal(third.status, 429, `third quick request: ${third.status} ${third.text}`);
  assert.match(String(third.headers['retry-after']), /^[1-9]\d*$/);
  assert.equal(third.headers['ratelimit-limit'], '2');
  assert.equal(third.json?.code, 'Svc.Data.RateLimited');
  assert.equal(up.requests.length, 2, 'the limited request never reached the upstream');
});

test('a chain written by the CLI opens in the designer with its nodes and links; saving it unchanged keeps the document and adds canvas', BOUNDED, async (t) => {
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  const written = {
    nodes: [
      { id: 'rid', step: 'request-id', settings: { header: 'x-trace' } },
      { id: 'hdr', step: 'request-headers', settings: { set: { 'x-a': '1' }, remove: ['cookie'] }, failureStrategy: 'Continue' },
      { id: 'rl', step: 'rate-limit', settings: { requestsPerSecond: 5, burst: 10, key: 'ip' } },
    ],
    links: [
      { from: 'rid', to: 'hdr' },
      { from: 'hdr', to: 'rl' },
    ],
  };
  const set = await runCli(['config', 'set', 'orch', 'cli-chain', ...cliFlags(gw)], { input: JSON.stringify(written) });
  assert.equal(set.code, 0, `config set from stdin: ${set.stdout} ${set.stderr}`);
  const before = (await cliGetOrch(gw, 'cli-chain')).draft.doc;
  assert.deepEqual(before, written, 'stored as written: no canvas');

  const { page } = await signedInPage(t, gw.adminUrl, gw.tokens.root!);
  await openDesigner(page, 'cli-chain', true);
  assert.equal(await page.getByTestId('designer-source').textContent(), 'draft');

  for (const n of written.nodes) {
    assert.ok(await page.getByTestId(`node-${n.id}`).isVisible(), `node ${n.id} visible`);
    assert.equal(await page.getByTestId(`node-step-${n.id}`).textContent(), n.step);
  }
  const edges = page.locator('.react-flow__edge');
  await edges.nth(1).waitFor();
  assert.equal(await edges.count(), 2);
  await page.getByTestId('rf__edge-link-0').waitFor();
  await page.getByTestId('rf__edge-link-1').waitFor();
  // the layout goes left to right along the links
  const x = async (id: string) => (await page.getByTestId(`node-${id}`).boundingBox())!.x;
  assert.ok((await x('rid')) < (await x('hdr')) && (await x('hdr')) < (await x('rl')), 'laid out along the links');

  // the node panel shows what the CLI wrote
  await page.getByTestId('select-rl').check();
  await panelShows(page, 'rl');
  assert.equal(await page.getByTestId('setting-requestsPerSecond').inputValue(), '5');
  assert.equal(await page.getByTestId('setting-burst').inputValue(), '10');
  // checkboxes build one selection: rl + hdr is two nodes (no node panel); unchecking rl leaves hdr
  await page.getByTestId('select-hdr').check();
  assert.equal(await page.getByTestId('node-panel').count(), 0);
  await page.getByTestId('select-rl').uncheck();
  await panelShows(page, 'hdr');
  assert.equal(await page.getByTestId('failure-strategy').inputValue(), 'Continue');
  assert.equal(await page.getByTestId('designer-dirty').count(), 0, 'looking is no edit');

  await save(page);
  const after = (await cliGetOrch(gw, 'cli-chain')).draft.doc;
  for (const n of after.nodes) assert.ok(hasCanvas(n), `canvas on ${n.id}: ${JSON.stringify(n)}`);
  assert.deepEqual({ ...after, nodes: after.nodes.map(withoutCanvas) }, written, 'same nodes, links and settings; canvas added');
});

test('a dry-run issue inside a chain is shown on its node; the designer fits 1280×800 and Tab reaches the palette; a package step has its form', BOUNDED, async (t) => {
  // A step package installed (test/fixtures/step-packages/gatekeeper): its steps are in the palette with their schema forms.
  const gw = await startGateway(t, { keys: [ROOT_KEY], edit: (c) => void (c.steps = { packages: [GATEKEEPER] }) });
  const { page } = await signedInPage(t, gw.adminUrl, gw.tokens.root!);
  await openDesigner(page, 'broken', false);

  // on screen at 1280×800
  const inView = async (testId: string) => {
    const el = page.getByTestId(testId);
    assert.ok(await el.isVisible(), `${testId} visible`);
    const b = (await el.boundingBox())!;
    // (1 px of slack for sub-pixel layout)
    assert.ok(b.x >= 0 && b.y >= 0 && b.x + b.width <= 1281 && b.y + b.height <= 801, `${testId} inside the viewport: ${JSON.stringify(b)}`);
  };
  await inView('designer-save');
  await inView('designer-canvas');
  await inView('designer-dry-run');

  // keyboard: Tab from the toolbar reaches the palette items, Enter adds the step
  await page.getByTestId('designer-dry-run').focus();
  let focused = '';
  for (let i = 0; i < 6 && !focused.startsWith('palette-step-'); i++) {
    await page.keyboard.press('Tab');
    focused = await page.evaluate(() => document.activeElement?.getAttribute('data-testid') ?? '');
  }
  assert.match(focused, /^palette-step-/, `Tab reached a palette item (focus on ${focused})`);
  await page.keyboard.press('Tab');
  const next = await page.evaluate(() => document.activeElement?.getAttribute('data-testid') ?? '');
  assert.match(next, /^palette-step-/, 'the next Tab stays in the palette');
  await page.getByTestId('palette-filter').fill('request-id');
  await page.getByTestId('palette-step-request-id').focus();
  await page.keyboard.press('Enter');
  await page.getByTestId('node-request-id-1').waitFor();
  await page.getByTestId('palette-filter').fill('');

  // a rate-limit node with a bad burst, set through the form; saved, then dry-run
  const rl = await addStep(page, 'rate-limit');
  await setting(page, 'requestsPerSecond', '1');
  await setting(page, 'burst', '0');
  await page.getByTestId('link-target').selectOption('request-id-1');
  await page.getByTestId('add-link').click();
  await save(page);

  const api = await dryRun(gw);
  assert.equal(api.status, 422, api.text);
  const ours = api.json.issues.filter((i) => i.kind === 'orch' && i.name === 'broken');
  assert.deepEqual(
    ours.map((i) => [i.code, i.pointer]),
    [['Compile.Step.Settings', '/nodes/1/settings/burst']],
  );

  await page.getByTestId('designer-dry-run').click();
  await page.getByTestId('designer-dry-run-result').waitFor();
  const marker = page.getByTestId(`node-issue-${rl}`);
  await marker.waitFor();
  assert.match((await marker.textContent()) ?? '', /Compile\.Step\.Settings/);
  assert.equal(await page.getByTestId('node-issue-request-id-1').count(), 0, 'no marker on the other node');
  assert.equal(await page.locator('[data-testid^="node-issue-"]').count(), 1);
  assert.match((await page.getByTestId('designer-issues').textContent()) ?? '', new RegExp(`Compile\\.Step\\.Settings.*node ${rl}/settings/burst`));
  // and next to the field in the node's settings form
  await page.getByTestId(`select-${rl}`).check();
  await panelShows(page, rl);
  assert.match((await page.getByTestId('setting-burst-error').textContent()) ?? '', /Compile\.Step\.Settings/);

  // fixed through the form, saved, dry-run again: the marker is gone
  await setting(page, 'burst', '3');
  await save(page);
  await page.getByTestId('designer-dry-run').click();
  await page.getByTestId('designer-dry-run-ok').waitFor();
  assert.equal(await page.locator('[data-testid^="node-issue-"]').count(), 0);
  const saved = (await getEntity(gw, 'orch', 'broken')).draft!.doc;
  assert.deepEqual(saved.nodes.map(withoutCanvas), [
    { id: 'request-id-1', step: 'request-id' },
    { id: rl, step: 'rate-limit', settings: { requestsPerSecond: 1, burst: 3 } },
  ]);
  assert.deepEqual(saved.links, [{ from: rl, to: 'request-id-1' }]);
  // placed where the palette put them: canvas on both, not on top of each other
  assert.ok(saved.nodes.every(hasCanvas), JSON.stringify(saved.nodes));
  assert.notDeepEqual(saved.nodes[0].canvas, saved.nodes[1].canvas);

  // The package step: named by its package in the palette, its settings form generated from its schema.
  assert.match((await page.getByTestId('palette-step-header-gate').textContent()) ?? '', /package sy-fixture-gatekeeper/);
  const gate = await addStep(page, 'header-gate');
  await setting(page, 'header', 'x-pass');
  await setting(page, 'value', 'open-sesame');
  await save(page);
  const withGate = (await getEntity(gw, 'orch', 'broken')).draft!.doc;
  assert.deepEqual(withGate.nodes.map(withoutCanvas).find((n: Json) => n.id === gate), { id: gate, step: 'header-gate', settings: { header: 'x-pass', value: 'open-sesame' } });
});
