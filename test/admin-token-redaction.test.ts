import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startGateway } from './helpers/gateway.js';
import { ROOT_KEY } from './helpers/admin.js';
import { request } from './helpers/http.js';
import { BOUNDED } from './helpers/wait.js';

/**
 * A system token pasted where an id, a name or a tenant goes, on every route shape:
 * it reaches neither the supervisor's log, nor the audit trail, nor the volume.
 */

const DOC = { directResponse: { statusCode: 200 } };

/** Every file of the volume (the database, -wal, -shm) as bytes. */
function volumeBytes(dir: string): Buffer {
  const data = join(dir, 'data');
  return Buffer.concat(readdirSync(data).map((f) => readFileSync(join(data, f))));
}

test('a system token pasted into any admin path is redacted in the log and the audit, and never stored', BOUNDED, async (t) => {
  const hexToken = randomBytes(32).toString('hex'); // lower-case hex: a valid tenant name
  const gw = await startGateway(t, {
    keys: [ROOT_KEY, { id: 'other', scopes: ['config:read'], source: 'tokenSha256' }, { id: 'hex', scopes: ['config:read'], token: hexToken, source: 'tokenSha256' }],
    workers: 1,
    volume: 'virtual://data/admin.db',
    logLevel: 'debug',
    edit: (c) => void (c.admin.authFailures = { burst: 1_000, perSecond: 1_000 }),
  });
  const root = gw.tokens.root!;
  const pasted = [root, gw.tokens.other!, hexToken];
  const api = `${gw.adminUrl}/api/v1`;

  const calls: [string, string, unknown?][] = [];
  for (const x of pasted) {
    calls.push(
      ['POST', `/default/key/revoke/${x}`],
      ['POST', `/default/key/delete/${x}`],
      ['POST', `/default/publish/rollback/${x}`],
      ['GET', `/default/config/get/route/${x}`],
      ['POST', `/default/config/set/route/${x}`, DOC],
      ['POST', `/default/config/delete/route/${x}`],
      ['POST', `/default/plugin/enable/${x}`],
      ['GET', `/${x}`],
      ['GET', `/${x}/config/list/route`],
      ['POST', `/${x}/config/set/route/r1`, DOC],
      ['GET', `/default/config/get/route/${encodeURIComponent(x).replace(/[A-Za-z]/, (c) => `%${c.charCodeAt(0).toString(16)}`)}`],
    );
  }
  const statuses: string[] = [];
  for (const [method, path, body] of calls) {
    const r = await request(`${api}${path}`, { method, token: root, body });
    assert.ok(r.status >= 400, `${method} ${path.replace(/[^/]{24,}/g, 'X')} is refused: ${r.status}`);
    statuses.push(`${method} ${r.status}`);
  }
  // A write the audit records, for the trail to hold more than refusals.
  assert.equal((await request(`${api}/default/config/set/route/fine`, { method: 'POST', token: root, body: DOC })).status, 200);

  const audit = await request(`${api}/default/audit/list?limit=500`, { token: root });
  assert.equal(audit.status, 200);
  assert.ok(audit.json.items.some((i: { target: string }) => i.target === 'route/[redacted token]'), `the audit names the redacted token: ${audit.text.slice(0, 400)}`);
  assert.ok(audit.json.items.some((i: { target: string }) => i.target === 'route/fine'), 'an ordinary name stays as it is');
  const logged = gw.logLines().filter((l) => l.msg === 'admin call');
  assert.ok(logged.some((l) => String(l.path).includes('[redacted token]')), 'the log names the redacted token');
  assert.ok(logged.some((l) => l.path === '/api/v1/default/config/set/route/fine'), 'an ordinary path stays as it is');

  const check = (where: string) => {
    const places: [string, Buffer | string][] = [
      ['stdout', gw.stdout()],
      ['stderr', gw.stderr()],
      ['audit list', audit.text],
      ['volume', volumeBytes(gw.dir)],
    ];
    for (const [name, text] of places) {
      for (const [i, x] of pasted.entries()) {
        assert.equal(text.includes(x), false, `${where}: token ${i} appears in the ${name}`);
      }
    }
  };
  check('while running');
  const stopped = await gw.stop();
  assert.equal(stopped.code, 0);
  check('after the stop');
});
