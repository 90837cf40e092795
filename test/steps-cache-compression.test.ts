import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gunzipSync, brotliDecompressSync } from 'node:zlib';
import { request as httpRequest } from 'node:http';
import { startGateway } from './helpers/gateway.js';
import { startUpstream } from './helpers/upstream.js';
import { ROOT_KEY, apply } from './helpers/admin.js';
import { request } from './helpers/http.js';
import { rawRequest } from './helpers/raw-http.js';
import { BOUNDED } from './helpers/wait.js';
import { createHash } from 'node:crypto';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/** A GET returning the raw body bytes (the http helper decodes text). */
function raw(url: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    httpRequest(url, { headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    })
      .on('error', reject)
      .end();
  });
}

test('cache and compression', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const big = JSON.stringify({ items: Array.from({ length: 300 }, (_, i) => ({ id: i, name: `item-${i}` })) });
  up.handler = (req, res) => {
    if (req.url?.startsWith('/c/vary')) {
      res.writeHead(200, { 'content-type': 'text/plain', vary: 'accept-language', 'content-length': 2 });
      res.end(String(req.headers['accept-language'] ?? '--').slice(0, 2));
      return true;
    }
    if (req.url?.startsWith('/both/')) {
      const body = JSON.stringify({ pad: 'x'.repeat(300_000) });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
      return true;
    }
    if (req.url?.startsWith('/c/two-lines')) {
      // Two Cache-Control lines: one list (RFC 9110 §5.3), private included.
      res.writeHead(200, [['content-type', 'text/plain'], ['cache-control', 'max-age=60'], ['cache-control', 'private'], ['content-length', '1']]);
      res.end('p');
      return true;
    }
    if (req.url?.startsWith('/c/aged')) {
      const age = req.url.split('?age=')[1] ?? '0';
      res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'max-age=60', age, 'content-length': 1 });
      res.end('a');
      return true;
    }
    if (req.url?.startsWith('/c/private')) {
      res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'private', 'content-length': 1 });
      res.end('p');
      return true;
    }
    if (req.url?.startsWith('/c/cc/')) {
      // /c/cc/<cache-control>: answers with that Cache-Control, body = who asked
      const cc = decodeURIComponent(req.url.slice('/c/cc/'.length).split('?')[0]!);
      const body = String(req.headers['x-consumer-id'] ?? req.headers.authorization ?? 'anonymous');
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body), ...(cc ? { 'cache-control': cc } : {}) });
      res.end(body);
      return true;
    }
    if (req.url?.startsWith('/z/')) {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(big) });
      res.end(big);
      return true;
    }
    return false;
  };
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'up', { targets: [up.target] }],
    ['route', 'cached', { cluster: 'up', pathPrefix: '/c', steps: [{ code: 'cache', settings: { ttlSeconds: 60 } }] }],
    ['route', 'keyed', { cluster: 'up', pathPrefix: '/k', steps: [
      { code: 'key-auth', settings: { keys: [{ id: 'alice', sha256: sha256('key-a') }, { id: 'bob', sha256: sha256('key-b') }] } },
      { code: 'cache', settings: { ttlSeconds: 60 } },
      { code: 'path-rewrite', settings: { replacePrefix: { from: '/k', to: '/c' } } },
    ] }],
    ['route', 'both', { cluster: 'up', pathPrefix: '/both', steps: [{ code: 'cache', settings: { ttlSeconds: 60 } }, { code: 'compression', settings: {} }] }],
    ['route', 'zipped-echo', { cluster: 'up', pathPrefix: '/zz', steps: [{ code: 'compression', settings: { minBytes: 10 } }] }],
    ['route', 'zipped', { cluster: 'up', pathPrefix: '/z', steps: [{ code: 'compression', settings: { minBytes: 100 } }] }],
  ]);
  const count = (url: string) => up.requests.filter((r) => r.url === url).length;

  await t.test('cache: MISS then HIT without reaching the upstream; Vary keys; private answers are not stored', async () => {
    const a = await request(`${gw.dataUrl}/c/item?x=1`);
    assert.equal(a.headers['x-cache'], 'MISS');
    const b = await request(`${gw.dataUrl}/c/item?x=1`);
    assert.equal(b.headers['x-cache'], 'HIT');
    assert.equal(b.text, a.text);
    assert.equal(count('/c/item?x=1'), 1);
    assert.equal((await request(`${gw.dataUrl}/c/item?x=2`)).headers['x-cache'], 'MISS', 'the query is part of the key');
    await request(`${gw.dataUrl}/c/vary`, { headers: { 'accept-language': 'de' } });
    const de = await request(`${gw.dataUrl}/c/vary`, { headers: { 'accept-language': 'de' } });
    assert.equal(de.headers['x-cache'], 'HIT');
    const fr = await request(`${gw.dataUrl}/c/vary`, { headers: { 'accept-language': 'fr' } });
    assert.equal(fr.headers['x-cache'], 'MISS');
    assert.equal(fr.text, 'fr');
    await request(`${gw.dataUrl}/c/private`);
    assert.equal((await request(`${gw.dataUrl}/c/private`)).headers['x-cache'], 'MISS');
    assert.equal((await request(`${gw.dataUrl}/c/item?x=1`, { method: 'POST', body: 'x' })).headers['x-cache'], undefined, 'POST bypasses the cache');
  });

  await t.test('cache: answers to requests with Authorization are not shared unless the answer says public; no-cache answers are not stored', async () => {
    // Regression: the cache stored every 200 answer, so one client's answer to its
    // Authorization header was handed to the next client asking the same URL (RFC 9111 §3.5).
    const alice = await request(`${gw.dataUrl}/c/cc/max-age=60`, { headers: { authorization: 'Bearer alice' } });
    assert.equal(alice.text, 'Bearer alice');
    const other = await request(`${gw.dataUrl}/c/cc/max-age=60`, { headers: { authorization: 'Bearer mallory' } });
    assert.equal(other.headers['x-cache'], 'MISS');
    assert.equal(other.text, 'Bearer mallory', 'the first client’s authorised answer is not handed out');
    const anon = await request(`${gw.dataUrl}/c/cc/max-age=60`);
    assert.equal(anon.text, 'anonymous');
    assert.equal(count('/c/cc/max-age=60'), 3);

    await request(`${gw.dataUrl}/c/cc/public`, { headers: { authorization: 'Bearer alice' } });
    const shared = await request(`${gw.dataUrl}/c/cc/public`, { headers: { authorization: 'Bearer bob' } });
    assert.equal(shared.headers['x-cache'], 'HIT', 'an answer marked public may be shared');

    await request(`${gw.dataUrl}/c/cc/no-cache`);
    assert.equal((await request(`${gw.dataUrl}/c/cc/no-cache`)).headers['x-cache'], 'MISS', 'no-cache answers need revalidation, which the cache does not do');
    assert.equal(count('/c/cc/no-cache'), 2);
  });

  await t.test('cache: every line of a repeated header counts; the answer’s own freshness and Age are kept to', async () => {
    // Regressions: a `private` on a second Cache-Control line was shared; the Vary key took
    // the first line of the varied header only, so a request with two Accept-Language lines
    // stored its answer under the first one's value for other clients (cache poisoning);
    // max-age=0 answers were served as hits, and a hit repeated the upstream's Age beside its own.
    await request(`${gw.dataUrl}/c/two-lines`);
    assert.equal((await request(`${gw.dataUrl}/c/two-lines`)).headers['x-cache'], 'MISS');
    const twice = await rawRequest(gw.dataPort, ['GET /c/vary/poison HTTP/1.1', 'Host: x', 'Accept-Language: en', 'Accept-Language: evil', 'Connection: close']);
    assert.equal(twice.status, 200);
    const victim = await request(`${gw.dataUrl}/c/vary/poison`, { headers: { 'accept-language': 'en' } });
    assert.equal(victim.headers['x-cache'], 'MISS', 'stored under "en, evil", not under "en"');
    await request(`${gw.dataUrl}/c/cc/max-age=0`);
    assert.equal((await request(`${gw.dataUrl}/c/cc/max-age=0`)).headers['x-cache'], 'MISS', 'stale at once: not kept');
    await request(`${gw.dataUrl}/c/aged?age=100`);
    assert.equal((await request(`${gw.dataUrl}/c/aged?age=100`)).headers['x-cache'], 'MISS', 'arrived 100 s old with max-age=60: stale');
    const aged = ['GET /c/aged?age=10 HTTP/1.1', 'Host: localhost', 'Connection: close'];
    await rawRequest(gw.dataPort, aged);
    const hit = await rawRequest(gw.dataPort, aged);
    assert.match(hit.raw, /\r\nx-cache: HIT\r\n/i);
    const ages = hit.raw.split('\r\n').filter((l) => /^age:/i.test(l));
    assert.deepEqual(ages.map((l) => l.toLowerCase()), ['age: 10'], hit.raw);
  });

  await t.test('cache: the consumer an auth step named is part of the key', async () => {
    // Regression: behind key-auth, alice's cached answer was served to bob.
    const a = await request(`${gw.dataUrl}/k/cc/max-age=60`, { headers: { 'x-api-key': 'key-a' } });
    assert.equal(a.text, 'alice');
    assert.equal(a.headers['x-cache'], 'MISS');
    const b = await request(`${gw.dataUrl}/k/cc/max-age=60`, { headers: { 'x-api-key': 'key-b' } });
    assert.equal(b.text, 'bob');
    assert.equal(b.headers['x-cache'], 'MISS');
    const a2 = await request(`${gw.dataUrl}/k/cc/max-age=60`, { headers: { 'x-api-key': 'key-a' } });
    assert.equal(a2.headers['x-cache'], 'HIT');
    assert.equal(a2.text, 'alice');
  });

  await t.test('cache: a hit carries every line of a repeated header', async () => {
    // Regression: hits were built from an object, so of two Link lines only the last came back.
    const links = { link: ['</a.css>; rel=preload', '</b.js>; rel=preload'] };
    const lines = async () => {
      const r = await rawRequest(gw.dataPort, ['GET /c/links HTTP/1.1', 'Host: x', 'Connection: close', `X-Up-Headers: ${JSON.stringify(links)}`]);
      return { cache: r.headers['x-cache'], link: r.raw.split('\r\n').filter((l) => /^link:/i.test(l)) };
    };
    assert.equal((await lines()).cache, 'MISS');
    const hit = await lines();
    assert.equal(hit.cache, 'HIT');
    assert.deepEqual(hit.link.map((l) => l.replace(/^link:\s*/i, '')), links.link);
  });

  await t.test('cache: a HEAD hit reports the length of the cached body and carries none', async () => {
    // Regression: a HEAD hit answered with an empty body, so it reported Content-Length: 0.
    const get = await raw(`${gw.dataUrl}/c/head`, {});
    assert.equal(get.headers['x-cache'], 'MISS');
    const head = await new Promise<{ headers: Record<string, unknown>; bytes: number }>((resolve, reject) => {
      httpRequest(`${gw.dataUrl}/c/head`, { method: 'HEAD', agent: false }, (res) => {
        let bytes = 0;
        res.on('data', (c: Buffer) => (bytes += c.length));
        res.on('end', () => resolve({ headers: res.headers, bytes }));
      })
        .on('error', reject)
        .end();
    });
    assert.equal(head.headers['x-cache'], 'HIT');
    assert.equal(head.headers['content-length'], String(get.body.length));
    assert.equal(head.bytes, 0);
  });

  await t.test('compression: q-values are weights, not refusals; 206, Content-Range and no-transform answers pass as they are; every Vary line is kept', async () => {
    // Regressions: any `q=0.x` read as q=0 (no compression for `gzip;q=0.8`); a 206 was
    // gzipped under a Content-Range counting plain bytes; no-transform was ignored; only
    // the first of several Vary lines survived.
    const zipped = (accept: string, extra: Record<string, unknown> = {}) =>
      raw(`${gw.dataUrl}/zz/q`, { 'accept-encoding': accept, 'x-up-headers': JSON.stringify(extra) });
    assert.equal((await zipped('gzip;q=0.8')).headers['content-encoding'], 'gzip');
    assert.equal((await zipped('br;q=0.9, gzip;q=0.5')).headers['content-encoding'], 'br');
    assert.equal((await zipped('br;q=0.4, gzip;q=0.5')).headers['content-encoding'], 'gzip', 'the higher q wins');
    assert.equal((await zipped('*;q=0.3')).headers['content-encoding'], 'br', '* covers the codings not named');
    assert.equal((await zipped('gzip;q=0, br;q=0')).headers['content-encoding'], undefined);
    const partial = await raw(`${gw.dataUrl}/zz/p`, { 'accept-encoding': 'gzip', 'x-up-status': '206', 'x-up-headers': JSON.stringify({ 'content-range': 'bytes 0-99/1000' }) });
    assert.equal(partial.status, 206);
    assert.equal(partial.headers['content-encoding'], undefined);
    assert.equal((await zipped('gzip', { 'cache-control': 'public, no-transform' })).headers['content-encoding'], undefined);
    // Regression: no-transform on a second Cache-Control line was not seen.
    assert.equal((await zipped('gzip', { 'cache-control': ['public', 'no-transform'] })).headers['content-encoding'], undefined);
    const varied = await zipped('gzip', { vary: ['Origin', 'Accept-Language'] });
    assert.equal(varied.headers['content-encoding'], 'gzip');
    assert.equal(varied.headers.vary, 'Origin, Accept-Language, Accept-Encoding');
  });

  await t.test('cache and compression on one route: each keeps its own size limit', async () => {
    // Regression: the smaller limit (cache's 256 KiB) applied to both, so a 300 KB answer
    // compression (4 MiB by default) should compress went out plain.
    const r = await raw(`${gw.dataUrl}/both/a`, { 'accept-encoding': 'gzip' });
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-encoding'], 'gzip');
    assert.ok(r.body.length < 10_000, `${r.body.length} bytes`);
  });

  await t.test('compression: brotli preferred, gzip next, identity without Accept-Encoding', async () => {
    const br = await raw(`${gw.dataUrl}/z/a`, { 'accept-encoding': 'gzip, br' });
    assert.equal(br.headers['content-encoding'], 'br');
    assert.match(String(br.headers.vary), /Accept-Encoding/);
    assert.equal(brotliDecompressSync(br.body).toString(), big);
    assert.ok(br.body.length < big.length / 3);
    const gz = await raw(`${gw.dataUrl}/z/b`, { 'accept-encoding': 'gzip' });
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.equal(gunzipSync(gz.body).toString(), big);
    const plain = await raw(`${gw.dataUrl}/z/c`, {});
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.equal(plain.body.toString(), big);
    const refused = await raw(`${gw.dataUrl}/z/d`, { 'accept-encoding': 'br;q=0, gzip' });
    assert.equal(refused.headers['content-encoding'], 'gzip', 'q=0 refuses brotli');
  });
});
