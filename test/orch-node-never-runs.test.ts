import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ROOT, startGateway, type Gateway } from './helpers/gateway.js';
import { ROOT_KEY, dryRun, setEntity, type CompileIssue, type Kind } from './helpers/admin.js';
import { runCli } from './helpers/cli.js';
import { request } from './helpers/http.js';
import { BOUNDED } from './helpers/wait.js';
import { benchRoutes } from '../bench/fixtures.mjs';
import { TEMPLATE } from '../console/src/entity-templates.js';

type Doc = Record<string, unknown>;
type Example = [Kind, string, Doc];

const neverRuns = (warnings: CompileIssue[]) => warnings.filter((w) => w.code === 'Compile.Orch.NodeNeverRuns');

/**
 * Every document the README and docs/*.md pipe to `config set` (`echo '{…}' | switchyard
 * config set <kind> <name>`, or a `-f - <<'JSON'` block).
 */
function markdownExamples(): Example[] {
  const files = [join(ROOT, 'README.md'), ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join(ROOT, 'docs', f))];
  const out: Example[] = [];
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/echo '(\{.*\})'\s*\\?\s*\|\s*(?:npx )?switchyard config set (\w+) ([\w-]+)/g)) out.push([m[2] as Kind, m[3]!, JSON.parse(m[1]!) as Doc]);
    for (const m of text.matchAll(/switchyard config set (\w+) ([\w-]+) -f - <<'JSON'\n([\s\S]*?)\nJSON\n/g)) out.push([m[1] as Kind, m[2]!, JSON.parse(m[3]!) as Doc]);
  }
  return out;
}

/** The config-as-code state document of docs/reference.md (its certificate is a placeholder, left out). */
function referenceStateExample(): Example[] {
  const text = readFileSync(join(ROOT, 'docs', 'reference.md'), 'utf8');
  const block = /## Config as code[\s\S]*?```yaml\n([\s\S]*?)```/.exec(text);
  assert.ok(block, 'docs/reference.md has its state document');
  const state = parseYaml(block[1]!) as Record<string, Record<string, Doc> | undefined>;
  const sections: [string, Kind][] = [['clusters', 'cluster'], ['routes', 'route'], ['orchs', 'orch']];
  return sections.flatMap(([section, kind]) => Object.entries(state[section] ?? {}).map(([name, doc]): Example => [kind, name, doc]));
}

/**
 * The console's templates for a new entity (console/src/entity-templates.ts), with the
 * template route running the template chain, as an operator starting from them would bind it.
 */
function consoleExample(): Example[] {
  return [
    ['cluster', 'api', TEMPLATE.cluster],
    ['route', 'api', { ...TEMPLATE.route, steps: [{ code: 'orch', settings: { ref: 'template' } }] }],
    ['orch', 'template', TEMPLATE.orch],
  ];
}

/** The bench's routes (bench/fixtures.mjs: the five steps every bench run publishes). */
function benchExample(): Example[] {
  return [['cluster', 'bench', { targets: ['127.0.0.1:1'] }], ...(benchRoutes('bench') as [string, Doc][]).map(([name, doc]): Example => ['route', name, doc])];
}

let gw: Gateway;

test('a shared gateway', BOUNDED, async (t) => {
  gw = await startGateway(t, { keys: [ROOT_KEY] });

  await t.test('an orch node after an echo: the dry-run and go warn, naming the chain, the node and the echo; the node indeed never runs', async () => {
    await setEntity(gw, 'cluster', 'api', { targets: ['127.0.0.1:1'] });
    await setEntity(gw, 'orch', 'debug', {
      nodes: [
        { id: 'tag', step: 'request-headers', settings: { set: { 'x-tag': 'seen' } } },
        { id: 'dump', step: 'echo' },
        { id: 'stamp', step: 'response-headers', settings: { set: { 'x-stamp': 'after' } } },
      ],
      links: [
        { from: 'tag', to: 'dump' },
        { from: 'dump', to: 'stamp' },
      ],
    });
    await setEntity(gw, 'route', 'dbg', { cluster: 'api', pathPrefix: '/dbg', steps: [{ code: 'orch', settings: { ref: 'debug' } }, { code: 'access-log' }] });

    const dry = await dryRun(gw);
    assert.equal(dry.status, 200, dry.text);
    assert.equal(dry.json.success, true);
    assert.deepEqual(
      neverRuns(dry.json.warnings).map((w) => [w.kind, w.name, w.pointer, w.message]),
      [
        ['route', 'dbg', '/steps/1', 'step 1 (access-log) never runs: step 0 (orch debug), whose echo step answers every request before it'],
        ['orch', 'debug', '/nodes/2', 'node stamp (response-headers) never runs: node dump (echo) answers every request before it'],
      ],
    );

    // The CLI's go carries the same warnings; the published chain then answers as they say.
    const env = { SWITCHYARD_ADMIN: gw.adminUrl, SWITCHYARD_TOKEN: gw.tokens.root };
    const go = await runCli(['publish', 'go'], { env });
    assert.equal(go.code, 0, go.stderr);
    const goWarnings = (go.json as { warnings: CompileIssue[] }).warnings;
    assert.deepEqual(neverRuns(goWarnings).map((w) => `${w.kind}/${w.name} ${w.pointer}`), ['route/dbg /steps/1', 'orch/debug /nodes/2']);

    const r = await request(`${gw.dataUrl}/dbg/x`);
    assert.equal(r.status, 200);
    assert.equal((r.json as { headers: [string, string][] }).headers.find(([k]) => k === 'x-tag')?.[1], 'seen', 'the node before the echo ran');
    assert.equal(r.headers['x-stamp'], undefined, 'the node after it did not');
  });

  await t.test('no bundled example (README and docs commands, the config-as-code document, the console templates, the bench routes) is warned about', async () => {
    const sources: [string, Example[]][] = [
      ['docs', markdownExamples()],
      ['reference', referenceStateExample()],
      ['console', consoleExample()],
      ['bench', benchExample()],
    ];
    const sizes = Object.fromEntries(sources.map(([s, e]) => [s, e.length]));
    assert.ok(sizes.docs! >= 5 && sizes.reference! >= 2 && sizes.bench! >= 4, `the examples were found: ${JSON.stringify(sizes)}`);
    assert.ok(
      sources.some(([, e]) => e.some(([kind, , doc]) => kind === 'route' && ((doc.steps as unknown[] | undefined) ?? []).length > 1)),
      'some example has a route with several steps',
    );
    // A chain is checked only where a route runs it: each source with orch chains binds one.
    const chained = sources.filter(([, e]) => e.some(([kind]) => kind === 'orch') && e.some(([kind, , doc]) => kind === 'route' && JSON.stringify(doc.steps ?? []).includes('"code":"orch"')));
    assert.deepEqual(chained.map(([s]) => s), ['reference', 'console'], 'the config-as-code document and the console templates each compile a chain a route runs');

    for (const [source, examples] of sources) {
      // A tenant per source, so names do not collide; a tenant's routes must name hosts.
      const tenant = `examples-${source}`;
      for (const [kind, name, doc] of examples) {
        const withHosts = kind === 'route' && doc.hosts === undefined ? { ...doc, hosts: [`${source}.example`] } : doc;
        await setEntity(gw, kind, name, withHosts, tenant);
      }
      const dry = await dryRun(gw, tenant);
      assert.ok(dry.json.warnings !== undefined, dry.text);
      assert.deepEqual(dry.json.issues.filter((i) => i.pointer.startsWith('/steps') || i.kind === 'orch'), [], `${source}: every example's steps compile`);
      assert.deepEqual(neverRuns(dry.json.warnings), [], `${source}: no NodeNeverRuns`);
    }
  });
});
