import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { startGateway, type Gateway } from './helpers/gateway.js';
import { rawRequest } from './helpers/raw-http.js';
import { ROOT_KEY, apply } from './helpers/admin.js';
import { NGINX } from './helpers/nginx.js';
import { PHP, phpQueryUpstream } from './helpers/php-upstream.js';
import { fastifyQueryUpstream, nginxQueryUpstream, semicolonUpstream, urlSearchParamsUpstream, type QueryUpstream } from './helpers/query-upstreams.js';

/** The key the route accepts, and one it never checked. */
const MINE = 'MINE';
const OTHER = 'OTHER';

/**
 * Query strings (with the X-Api-Key header where `header` is set) carrying the credential
 * `api_key`: its name encoded (`%5F`, `%5f`, `%61`), in another case (nginx), with `+`,
 * a space, `.`, `[]`, an unclosed `[` or a NUL (PHP), `%u005F` (.NET Framework), `;`-joined
 * (Go before 1.17, Rack), repeated, in either order,
 * and beside a header key. `status`: what the gateway answers (200 forwarded, 400
 * ambiguous, 401 no valid key).
 */
const CASES: { query: string | null; header?: string[]; status: 200 | 400 | 401 }[] = [
  { query: `api_key=${MINE}`, status: 200 },
  { query: null, header: [MINE], status: 200 },
  { query: `api%5Fkey=${MINE}`, status: 200 },
  { query: `Api_Key=${MINE}`, status: 200 },
  { query: `api_key=MI%4EE&page=2`, status: 200 },
  { query: `page=2&api_key=${MINE}&sort=a`, status: 200 },
  { query: `api_key=${MINE}&%2561pi_key=${OTHER}`, status: 200 },
  { query: `api_key=${MINE}`, header: [MINE], status: 200 },
  { query: `api_key=${OTHER}`, status: 401 },
  { query: 'api_key', status: 401 },
  { query: `api_key=${MINE}%26api_key%3D${OTHER}`, status: 401 },
  { query: `api_key=${MINE}&api%5Fkey=${OTHER}`, status: 400 },
  { query: `api%5Fkey=${OTHER}&api_key=${MINE}`, status: 400 },
  { query: `api_key=${MINE}&api%5fkey=${OTHER}`, status: 400 },
  { query: `api%5fkey=${OTHER}&api_key=${MINE}`, status: 400 },
  { query: `api_key=${MINE}&%61pi_key=${OTHER}`, status: 400 },
  { query: `%61pi_key=${OTHER}&api_key=${MINE}`, status: 400 },
  { query: `%41PI_KEY=${OTHER}&api_key=${MINE}`, status: 400 },
  { query: 'api%5Fkey=', header: [MINE], status: 400 },
  { query: `api%5Fkey=${OTHER}`, header: [MINE], status: 400 },
  { query: `api_key=${OTHER}`, header: [MINE], status: 400 },
  { query: `API_KEY=${OTHER}`, header: [MINE], status: 400 },
  { query: `api_key=${MINE}&API_KEY=${OTHER}`, status: 400 },
  { query: `API_KEY=${OTHER}&api_key=${MINE}`, status: 400 },
  { query: `api_key=${MINE}&Api_Key=${OTHER}`, status: 400 },
  { query: `api_key=${MINE}&api+key=${OTHER}`, status: 400 },
  { query: `api%20key=${OTHER}&api_key=${MINE}`, status: 400 },
  { query: `api.key=${OTHER}&api_key=${MINE}`, status: 400 },
  { query: `api_key[]=${OTHER}&api_key=${MINE}`, status: 400 },
  { query: `api_key=${MINE}&api[key=${OTHER}`, status: 400 },
  { query: `api[key=${OTHER}&api_key=${MINE}`, status: 400 },
  { query: `api_key=${MINE}&api%5Bkey=${OTHER}`, status: 400 },
  { query: `api_key=${MINE}&api_key%00=${OTHER}`, status: 400 },
  { query: `api_key=${MINE}&api[key%00]=${OTHER}`, status: 400 },
  { query: `api_key=${MINE}&api%u005Fkey=${OTHER}`, status: 400 },
  // .NET compares names upper-cased: the dotless ı is an I, ſ an S, the Kelvin sign a K.
  { query: `ap%C4%B1_key=${OTHER}&api_key=${MINE}`, status: 400 },
  { query: `api_%E2%84%AAey=${OTHER}&api_key=${MINE}`, status: 400 },
  { query: `+api_key=${OTHER}&api_key=${MINE}`, status: 400 },
  { query: `api_key%00=${OTHER}`, header: [MINE], status: 400 },
  { query: `api[key=${MINE}`, status: 200 },
  { query: `api[key]=${OTHER}&api_key=${MINE}`, status: 200 },
  { query: `api.key[x=${OTHER}&api_key=${MINE}`, status: 200 },
  { query: `api%u005Fkey=${OTHER}`, status: 401 },
  { query: `api_key=${MINE};api_key=${OTHER}`, status: 400 },
  { query: `api_key=${OTHER};api_key=${MINE}`, status: 400 },
  { query: `x=1;api_key=${OTHER}&api_key=${MINE}`, status: 400 },
  { query: `api_key=${MINE}&x=1;api_key=${OTHER}`, status: 400 },
  { query: `api_key=${MINE};x=1`, status: 400 },
  { query: `x=1;api_key=${OTHER}`, header: [MINE], status: 400 },
  { query: `api_key=${MINE}&api_key=${OTHER}`, status: 400 },
  { query: `api_key=${OTHER}&api_key=${MINE}`, status: 400 },
  { query: `api_key=${MINE}&api_key=${MINE}`, status: 400 },
  { query: `api_key=${MINE}&api%5Fkey=${MINE}`, status: 400 },
  { query: `api_key=${MINE}&api_key`, status: 400 },
  { query: null, header: [MINE, OTHER], status: 400 },
  { query: `api_key=${MINE}`, header: [MINE, OTHER], status: 400 },
];

/** key-auth on `api_key` (query) and X-Api-Key: /strip removes the credential, /keep forwards it. */
function routesFor(up: QueryUpstream): [('cluster' | 'route'), string, unknown][] {
  const hosts = [`${up.name}.test`];
  const keyAuth = (keepCredential: boolean) => ({ code: 'key-auth', settings: { header: 'x-api-key', query: 'api_key', keepCredential, keys: [{ id: 'mine', sha256: createHash('sha256').update(MINE).digest('hex') }] } });
  return [
    ['cluster', up.name, { targets: [up.target] }],
    ['route', `${up.name}-strip`, { cluster: up.name, pathPrefix: '/strip', hosts, steps: [keyAuth(false)] }],
    ['route', `${up.name}-keep`, { cluster: up.name, pathPrefix: '/keep', hosts, steps: [keyAuth(true)] }],
  ];
}

/** What the upstream read as the credential (empty values hold none), or null when the gateway answered itself. */
async function send(gw: Gateway, up: QueryUpstream, path: string, c: (typeof CASES)[number]): Promise<{ status: number; read: string[] | null; uri: string | null }> {
  const target = c.query === null ? path : `${path}?${c.query}`;
  const headers = (c.header ?? []).map((k) => `X-Api-Key: ${k}`);
  const r = await rawRequest(gw.dataPort, [`GET ${target} HTTP/1.1`, `Host: ${up.name}.test`, ...headers, 'Connection: close']);
  if (r.status !== 200) return { status: r.status, read: null, uri: null };
  const reading = up.reading(r.text);
  const read = [...reading.query, ...(reading.header === null ? [] : [reading.header])].filter((v) => v !== '');
  return { status: r.status, read, uri: reading.uri };
}

test('no encoding of a query credential reaches an upstream unchecked: each upstream reads no key (stripped) or only the one checked (kept)', { timeout: 180_000 }, async (t) => {
  assert.ok(CASES.length >= 40);
  const nginx = await nginxQueryUpstream(t);
  if (!nginx) t.diagnostic(`${NGINX} is not installed (scripts/install-test-packages.sh installs nginx-light): the nginx upstream is skipped`);
  const php = await phpQueryUpstream(t);
  if (!php) t.diagnostic(`${PHP} is not installed (scripts/install-test-packages.sh installs php-cli): the PHP upstream is skipped`);
  const ups = [await urlSearchParamsUpstream(t), await fastifyQueryUpstream(t), await semicolonUpstream(t), ...(nginx ? [nginx] : []), ...(php ? [php] : [])];
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, ups.flatMap(routesFor));

  // Sanity: each upstream reads the credential it is sent, so a silent upstream cannot pass the matrix.
  for (const up of ups) {
    const seen = await send(gw, up, '/keep', { query: `api_key=${MINE}`, status: 200 });
    assert.deepEqual([seen.status, seen.read], [200, [MINE]], `${up.name} reads a kept key`);
  }
  for (const c of CASES) {
    for (const up of ups) {
      const label = `${up.name} ${JSON.stringify(c.query)}${c.header ? ` with X-Api-Key ${c.header.join(', ')}` : ''}`;
      const stripped = await send(gw, up, '/strip', c);
      assert.equal(stripped.status, c.status, `${label} on /strip`);
      if (stripped.read !== null) assert.deepEqual(stripped.read, [], `${label} on /strip: the upstream read a credential (${stripped.uri})`);
      const kept = await send(gw, up, '/keep', c);
      assert.equal(kept.status, c.status, `${label} on /keep`);
      if (kept.read !== null) assert.ok(kept.read.every((v) => v === MINE), `${label} on /keep: the upstream read ${JSON.stringify(kept.read)}, not only the key checked (${kept.uri})`);
    }
  }
});

test('the other parameters reach the upstream with their bytes when the credential is stripped', { timeout: 60_000 }, async (t) => {
  const up = await urlSearchParamsUpstream(t);
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, routesFor(up));
  const uri = async (query: string) => (await send(gw, up, '/strip', { query, status: 200 })).uri;
  assert.equal(await uri(`page=2&api%5Fkey=${MINE}&sort=a+b&&x=%zz`), '/strip?page=2&sort=a+b&&x=%zz');
  assert.equal(await uri(`Api_Key=${MINE}`), '/strip');
  assert.equal(await uri(`api_key=${MINE}&%2561pi_key=${OTHER}`), `/strip?%2561pi_key=${OTHER}`, 'a name encoded twice is no credential to upstreams that decode once');
});
