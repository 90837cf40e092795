import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderHuman } from '../../src/cli/output/human.js';
import { isControl } from '../../src/cli/output/cell.js';
import { table } from '../../src/cli/output/table.js';
import { selectFields } from '../../src/cli/output/fields.js';
import { errorLine } from '../../src/cli/output/error-line.js';
import { jsonFlagValue } from '../../src/cli/json-flag.js';
import { closest } from '../../src/cli/hooks/command-not-found.js';
import { explainFooter } from '../../src/cli/explain-view.js';

test('a table pads every column to its widest cell; null is "-", lists are joined, long cells end with …', () => {
  const out = table(
    [
      { name: 'api', state: 'published', scopes: ['a', 'b'], note: null },
      { name: 'a-much-longer-name', state: 'draft', scopes: [], note: 'x'.repeat(80) },
    ],
    ['name', 'state', 'scopes', 'note'],
  ).split('\n');
  assert.equal(out[0], 'NAME                STATE      SCOPES  NOTE');
  assert.equal(out[1], 'api                 published  a, b    -');
  assert.ok(out[2]!.startsWith('a-much-longer-name  draft      -       xxx'));
  assert.ok(out[2]!.endsWith('…') && out[2]!.length < 120);
});

test('control characters from the admin port never reach the terminal as themselves', () => {
  const hostile = 'ci\u001b]0;owned\u0007\u001b[2J';
  const text = renderHuman({ tenant: 'acme', items: [{ id: 'key_1', name: hostile }] }) + renderHuman({ name: hostile, doc: { [hostile]: 1 } });
  const raw = (s: string) => [...s].filter((c) => c !== '\n' && isControl(c.charCodeAt(0)));
  assert.deepEqual(raw(text), []);
  assert.match(text, /ci\\u001b\]0;owned\\u0007/);
  const line = errorLine(400, { code: 'Svc.X', message: `bad ${hostile}` }, { tokenSent: true, tenantGiven: false });
  assert.deepEqual(raw(line), []);
});

test('--json fields: each row of a list, or the answer itself; dotted paths reach inside; a missing field is null', () => {
  const list = { tenant: 't', items: [{ id: 1, identity: { id: 'root' } }, { id: 2 }] };
  assert.deepEqual(selectFields(list, ['id', 'identity.id']), [
    { id: 1, 'identity.id': 'root' },
    { id: 2, 'identity.id': null },
  ]);
  assert.deepEqual(selectFields({ name: 'api', state: 'draft', x: 1 }, ['name', 'state']), { name: 'api', state: 'draft' });
  assert.deepEqual(selectFields({ workers: [{ pid: 9 }] }, ['pid'], 'workers'), [{ pid: 9 }]);
});

test('a bare --json (last, or before another flag) means the whole body; --json <words> names fields', () => {
  assert.deepEqual(jsonFlagValue(['config', 'list', 'route', '--json']), ['config', 'list', 'route', '--json=*']);
  assert.deepEqual(jsonFlagValue(['status', '--json', '--tenant', 'a']), ['status', '--json=*', '--tenant', 'a']);
  assert.deepEqual(jsonFlagValue(['status', '--json', 'generation']), ['status', '--json', 'generation']);
  assert.deepEqual(jsonFlagValue(['config', 'set', 'route', 'x', '--', '--json']), ['config', 'set', 'route', 'x', '--', '--json']);
});

test('a mistyped command gets the closest one, compared word for word; nothing for a word far from all', () => {
  const ids = ['publish:go', 'publish:dry-run', 'config:set', 'config:get', 'status', 'whoami', 'key:issue'];
  assert.equal(closest('publsh:go', ids), 'publish:go');
  assert.equal(closest('config:st:route:api', ids), 'config:set');
  assert.equal(closest('stauts', ids), 'status');
  assert.equal(closest('key:isue', ids), 'key:issue');
  assert.equal(closest('frobnicate', ids), null);
});

test("explain's footer: the winner's terminal, each step's verdict with its answer, the upstream target and path; control characters escaped", () => {
  const body = {
    route: { name: 'users', terminal: { type: 'cluster', cluster: 'api', steps: [
      { code: 'key-auth', failureStrategy: 'FailFast', verdict: 'passes', reason: 'lets this request through' },
      { code: 'method-restriction', failureStrategy: 'FailFast', verdict: 'refuses', status: 405, error: 'Svc.Data.MethodNotAllowed', reason: 'refuses' },
    ] } },
    upstream: { target: null, reason: 'round robin', path: '/v2\u001b[31m', query: 'a=1' },
  };
  const text = explainFooter(body)!;
  assert.match(text, /^route users: cluster to cluster api$/m);
  assert.match(text, /^ {2}2\. method-restriction \(FailFast\): refuses 405 Svc\.Data\.MethodNotAllowed: refuses$/m);
  assert.match(text, /^upstream: \(decided per request\): round robin$/m);
  assert.ok(!text.includes('\u001b'), 'no raw escape reaches the terminal');
  assert.equal(explainFooter({ route: null }), null);
});
