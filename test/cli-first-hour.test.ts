import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Config } from '@oclif/core';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, startGateway, tempDir } from './helpers/gateway.js';
import { ROOT_KEY } from './helpers/admin.js';
import { runCli, runTty, type CliResult } from './helpers/cli.js';
import { request } from './helpers/http.js';
import { BOUNDED } from './helpers/wait.js';

const ok = (r: CliResult, what: string) => assert.equal(r.code, 0, `${what}: exit ${r.code}\n${r.stdout}\n${r.stderr}`);

test('a tenant sub-key without --tenant acts on its own tenant: config set, publish dry-run, publish go, key list', BOUNDED, async (t) => {
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  const admin = { SWITCHYARD_ADMIN: gw.adminUrl };
  const issued = await runCli(['key', 'issue', '--tenant', 'acme', '--name', 'ci', '--scope', 'config:read,config:write,publish:read,publish:write,key:read'], {
    env: { ...admin, SWITCHYARD_TOKEN: gw.tokens.root },
  });
  ok(issued, 'key issue');
  const env = { ...admin, SWITCHYARD_TOKEN: (issued.json as { token: string }).token };

  const set = await runCli(['config', 'set', 'route', 'ping'], { env, input: '{"directResponse":{"statusCode":200,"body":"acme"},"pathPrefix":"/ping","hosts":["acme.example"]}' });
  ok(set, 'config set');
  const dry = await runCli(['publish', 'dry-run'], { env });
  ok(dry, 'publish dry-run');
  assert.deepEqual((dry.json as { planned: string[] }).planned, ['route/ping']);
  const go = await runCli(['publish', 'go'], { env });
  ok(go, 'publish go');
  const keys = await runCli(['key', 'list'], { env });
  ok(keys, 'key list');
  assert.equal((keys.json as { tenant: string }).tenant, 'acme');

  // The writes landed in acme, not in default.
  const acme = await request(`${gw.adminUrl}/api/v1/acme/config/get/route/ping`, { token: gw.tokens.root });
  assert.equal(acme.status, 200);
  assert.equal(acme.json.published.generation, 1);
  const other = await request(`${gw.adminUrl}/api/v1/default/config/get/route/ping`, { token: gw.tokens.root });
  assert.equal(other.status, 404);

  // A system key without --tenant acts on default; SWITCHYARD_TENANT counts as --tenant.
  const rootEnv = { ...admin, SWITCHYARD_TOKEN: gw.tokens.root };
  assert.equal(((await runCli(['config', 'list', 'route'], { env: rootEnv })).json as { tenant: string }).tenant, 'default');
  const viaEnv = await runCli(['config', 'list', 'route'], { env: { ...rootEnv, SWITCHYARD_TENANT: 'acme' } });
  assert.deepEqual((viaEnv.json as { items: { name: string }[] }).items.map((i) => i.name), ['ping']);

  // The sub-key on another tenant is refused, and the error line says why.
  const elsewhere = await runCli(['config', 'list', 'route', '--tenant', 'default'], { env });
  assert.equal(elsewhere.code, 2);
  assert.equal((elsewhere.json as { code: string }).code, 'Svc.Auth.TenantScope');
  assert.match(elsewhere.stderr, /acts on its own tenant only: drop --tenant/);
});

test('on a terminal lists are tables and errors one line; through a pipe the body as sent; --json selects fields', BOUNDED, async (t) => {
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  const env = { SWITCHYARD_ADMIN: gw.adminUrl, SWITCHYARD_TOKEN: gw.tokens.root };
  for (const [name, prefix] of [['api', '/api'], ['ping', '/ping']]) {
    ok(await runCli(['config', 'set', 'route', name!], { env, input: JSON.stringify({ directResponse: { statusCode: 200 }, pathPrefix: prefix }) }), `set ${name}`);
  }

  const tty = await runTty(['config', 'list', 'route'], { env });
  ok(tty, 'config list on a terminal');
  const lines = tty.stdout.trim().split('\n');
  const head = lines.findIndex((l) => l.startsWith('NAME'));
  assert.ok(head > 0, `a table with a header line:\n${tty.stdout}`);
  assert.match(lines[head]!, /^NAME\s+STATE\s+PENDING\s+PUBLISHED GENERATION/);
  assert.match(lines[head + 1]!, /^api\s+draft\s+/);
  assert.match(lines[head + 2]!, /^ping\s+draft\s+/);
  // The columns line up: every row's STATE starts where the header's does.
  const col = lines[head]!.indexOf('STATE');
  assert.equal(lines[head + 1]!.indexOf('draft'), col);
  assert.doesNotMatch(tty.stdout, /[{}]/, 'no JSON on the terminal');

  const entity = await runTty(['config', 'get', 'route', 'api'], { env });
  assert.match(entity.stdout, /^name:\s+api$/m);
  assert.match(entity.stdout, /^state:\s+draft$/m);

  const denied = await runTty(['whoami'], { env: { ...env, SWITCHYARD_TOKEN: undefined } });
  assert.equal(denied.code, 2);
  assert.match(denied.stdout, /^Error: .*\(Svc\.Auth\.Unauthenticated\)\n\s+no token was sent: pass --token <token> or set SWITCHYARD_TOKEN\n$/);

  // Through a pipe: byte for byte what REST answers.
  const piped = await runCli(['config', 'list', 'route'], { env });
  ok(piped, 'config list piped');
  const rest = await request(`${gw.adminUrl}/api/v1/default/config/list/route`, { token: gw.tokens.root });
  assert.equal(piped.stdout, rest.text + '\n');
  const forced = await runTty(['config', 'list', 'route', '--json'], { env });
  assert.equal(forced.stdout, rest.text + '\n', '--json on a terminal prints the body too');

  const one = await runCli(['config', 'list', 'route', '--json', 'name'], { env });
  assert.deepEqual(one.json, [{ name: 'api' }, { name: 'ping' }]);
  const two = await runCli(['config', 'get', 'route', 'ping', '--json', 'name,state,draft.doc.pathPrefix'], { env });
  assert.deepEqual(two.json, { name: 'ping', state: 'draft', 'draft.doc.pathPrefix': '/ping' });
});

test('help teaches: a typo gets a suggestion, -h works, config set -h shows arguments, env variables and an example', BOUNDED, async () => {
  const typo = await runCli(['publsh', 'go']);
  assert.equal(typo.code, 2);
  assert.match(typo.stderr, /did you mean publish go\?/);
  assert.equal((typo.json as { code: string }).code, 'Cli.Input');

  // On a terminal the suggestion is a question (@oclif/plugin-not-found): no keeps the
  // refusal, yes runs the command with the words after it.
  const declined = await runTty(['whoamii'], { answer: { when: /Did you mean .*whoami.*\?/, type: 'n' } });
  assert.equal(declined.code, 2, declined.stdout);
  assert.match(declined.stdout, /Did you mean .*whoami/, 'asked');
  assert.match(declined.stdout, /"code":"Cli.Input","message":"whoamii is not a switchyard command; did you mean whoami\?"/);
  const accepted = await runTty(['whoamii'], { env: { SWITCHYARD_ADMIN: 'http://127.0.0.1:1', SWITCHYARD_TOKEN: 'unused' }, answer: { when: /Did you mean .*whoami.*\?/, type: 'y' } });
  assert.equal(accepted.code, 4, `whoami ran and could not reach the admin port: ${accepted.stdout}`);
  assert.match(accepted.stdout, /Cli\.Unreachable/);

  const help = await runCli(['config', 'set', '-h'], { env: { SWITCHYARD_ADMIN: 'http://127.0.0.1:9180' } });
  assert.equal(help.code, 0, help.stderr);
  assert.match(help.stdout, /^ARGUMENTS\n\s+KIND\s+\(cluster\|route\|orch\|cert\)/m);
  assert.match(help.stdout, /--admin=<value>\s+\[env: SWITCHYARD_ADMIN\]/);
  assert.match(help.stdout, /--token=<value>\s+\[env: SWITCHYARD_TOKEN\]/);
  assert.match(help.stdout, /--tenant=<value>\s+\[env: SWITCHYARD_TENANT\]/);
  assert.doesNotMatch(help.stdout, /\(required\)/);
  assert.match(help.stdout, /^EXAMPLES\n\s+\$ switchyard config set/m);

  const noAdmin = await runCli(['whoami']);
  assert.equal(noAdmin.code, 2);
  assert.match(noAdmin.stderr, /pass --admin <url> or set SWITCHYARD_ADMIN/);
});

test('every command has a summary and an example, and every argument a description', async () => {
  const config = await Config.load(ROOT);
  assert.ok(config.commands.length >= 20, `${config.commands.length} commands`);
  for (const c of config.commands.filter((c) => !c.hidden)) {
    assert.ok(c.summary ?? c.description, `${c.id}: a summary`);
    assert.ok((c.examples ?? []).length > 0, `${c.id}: at least one example`);
    for (const [name, arg] of Object.entries(c.args ?? {})) assert.ok(arg.description, `${c.id} ${name}: a description`);
  }
});

test('shell completion: switchyard autocomplete builds bash and zsh functions that know every command', BOUNDED, async (t) => {
  const cache = tempDir(t);
  const r = await runCli(['autocomplete', '--refresh-cache'], { env: { XDG_CACHE_HOME: cache } });
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const config = await Config.load(ROOT);
  const fn = (shell: string) => readFileSync(join(cache, 'switchyard', 'autocomplete', 'functions', shell), 'utf8');
  const bash = fn('bash/switchyard.bash');
  const zsh = fn('zsh/_switchyard');
  for (const c of config.commands.filter((c) => !c.hidden && c.pluginName === 'switchyard')) {
    assert.ok(bash.includes(c.id), `bash completes ${c.id}`);
    // zsh: one function per topic, its verbs as values.
    const [topic, verb] = c.id.includes(':') ? c.id.split(':') : [null, c.id];
    assert.ok((topic === null || zsh.includes(`_switchyard_${topic}()`)) && zsh.includes(`"${verb}[`), `zsh completes ${c.id}`);
  }
});
