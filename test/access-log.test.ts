import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { startGateway, type Gateway } from './helpers/gateway.js';
import { ROOT_KEY, apply, clusterStatus } from './helpers/admin.js';
import { request } from './helpers/http.js';
import { rawRequest } from './helpers/raw-http.js';
import { sendMany } from './helpers/load.js';
import { startUpstream } from './helpers/upstream.js';
import { BOUNDED, waitFor } from './helpers/wait.js';
import type { Json } from './helpers/json.js';

type Line = Record<string, Json>;

/** A gateway with worker.json `log.access` set as given (a relative `path` is in the gateway's folder). */
function gatewayWithAccessLog(t: TestContext, access: Record<string, Json> | null, workers = 1): Promise<Gateway> {
  return startGateway(t, {
    workers,
    keys: [ROOT_KEY],
    edit: (c) => {
      if (access !== null) c.log = { ...(c.log as Record<string, Json>), access: { enabled: true, ...access } };
    },
  });
}

/** The file's lines, each checked to be one JSON object ([] while the file does not exist). */
function jsonLines(file: string): Line[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      const v = JSON.parse(l) as Json;
      assert.ok(v !== null && typeof v === 'object' && !Array.isArray(v), `a JSON object: ${l}`);
      return v as Line;
    });
}

const lineCount = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').length - 1 : 0);

test('one JSON line per request: time, id, tenant, route, method, path with the query redacted, status, bytes, durations, upstream, client', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const gw = await gatewayWithAccessLog(t, { path: 'logs/access.log' });
  const file = join(gw.dir, 'logs', 'access.log');
  await apply(gw, [['cluster', 'c', { targets: [up.target] }], ['route', 'r', { cluster: 'c', pathPrefix: '/api' }]]);
  const before = Date.now();
  const r = await request(`${gw.dataUrl}/api/items?Token=abc&x=1&api%5Fkey=k&api.key=k2&api_key[]=k3&+api_key=k4`, { headers: { 'user-agent': 'probe/1.0', referer: 'https://ref.test/' } });
  assert.equal(r.status, 200);
  const missing = await request(`${gw.dataUrl}/nowhere`);
  assert.equal(missing.status, 404);

  const [line, notFound] = await waitFor('two access lines', () => {
    const lines = jsonLines(file);
    return lines.length >= 2 ? lines : undefined;
  });
  assert.equal(jsonLines(file).length, 2, 'one line per request');
  const time = Date.parse(String(line!.time));
  assert.ok(time >= before - 1000 && time <= Date.now(), `time ${line!.time} is ISO 8601 of the arrival`);
  assert.match(String(line!.requestId), /\S/, 'a request id');
  assert.equal(line!.requestId, r.headers['x-request-id'], 'the id the client was told');
  assert.deepEqual(
    { tenant: line!.tenant, route: line!.route, method: line!.method, path: line!.path, status: line!.status, upstream: line!.upstream, client: line!.client },
    { tenant: 'default', route: 'r', method: 'GET', path: '/api/items?Token=[redacted]&x=1&api%5Fkey=[redacted]&api.key=[redacted]&api_key[]=[redacted]&+api_key=[redacted]', status: 200, upstream: up.target, client: '127.0.0.1' },
  );
  assert.equal(line!.bytesSent, Buffer.byteLength(r.text), 'bytes sent: the body');
  assert.equal(line!.bytesReceived, 0);
  assert.equal(line!.userAgent, 'probe/1.0');
  assert.equal(line!.referer, 'https://ref.test/');
  for (const f of ['durationMs', 'upstreamMs'] as const) assert.ok(typeof line![f] === 'number' && line![f] >= 0, `${f}: ${line![f]}`);
  assert.ok((line!.upstreamMs as number) <= (line!.durationMs as number), 'the upstream time is part of the whole');
  assert.ok(!up.requests[0]!.url.includes('[redacted]'), 'the upstream got the query as sent');

  assert.deepEqual(
    { status: notFound!.status, path: notFound!.path, tenant: notFound!.tenant, route: notFound!.route, upstream: notFound!.upstream },
    { status: 404, path: '/nowhere', tenant: null, route: null, upstream: null },
    'a request no route took has its line too',
  );
});

test('sample 0.1 logs 10 % ± 3 % of 5,000 requests over keep-alive connections, across two workers', BOUNDED, async (t) => {
  const gw = await gatewayWithAccessLog(t, { path: 'access.log', sample: 0.1, fields: ['requestId', 'status'] }, 2);
  await apply(gw, [['route', 'r', { directResponse: { statusCode: 200, body: 'ok' } }]]);
  const statuses = await sendMany(gw.dataPort, 5_000, 8);
  assert.equal(statuses.filter((s) => s === 200).length, 5_000);
  const stop = await gw.stop(); // a drain writes every line held
  assert.equal(stop.code, 0);
  const lines = jsonLines(join(gw.dir, 'access.log'));
  assert.ok(lines.length >= 350 && lines.length <= 650, `${lines.length} lines of 5000 requests`);
  assert.ok(lines.every((l) => l.status === 200 && Object.keys(l).join() === 'requestId,status'), 'only the configured fields');
  assert.equal(new Set(lines.map((l) => l.requestId)).size, lines.length, 'one line per sampled request');
});

test('SIGHUP to the supervisor reopens the file after logrotate renamed it: later lines go to the new file, none lost', BOUNDED, async (t) => {
  const gw = await gatewayWithAccessLog(t, { path: 'access.log' }, 2);
  const file = join(gw.dir, 'access.log');
  await apply(gw, [['route', 'r', { directResponse: { statusCode: 200, body: 'ok' } }]]);
  await sendMany(gw.dataPort, 300, 4);
  await waitFor('300 lines written', () => lineCount(file) === 300);
  renameSync(file, `${file}.1`);
  process.kill(gw.pid, 'SIGHUP');
  const workerPids = (await clusterStatus(gw)).workers.map((w) => w.pid);
  await waitFor('every worker reopened', () => {
    const pids = new Set(gw.logLines().filter((l) => (l as Line).msg === 'access log reopened').map((l) => (l as Line).pid));
    return workerPids.every((p) => pids.has(p));
  });
  await sendMany(gw.dataPort, 300, 4);
  const stop = await gw.stop();
  assert.deepEqual([stop.code, stop.signal], [0, null], 'SIGHUP did not end the gateway');
  assert.equal(jsonLines(`${file}.1`).length, 300, 'the renamed file kept the lines before the HUP');
  assert.equal(jsonLines(file).length, 300, 'the new file has every line after it');
  const status = gw.logLines().filter((l) => (l as Line).msg === 'worker exited; respawning');
  assert.deepEqual(status, [], 'no worker died');
});

test('SIGHUP never ends the gateway, to the supervisor or to the whole group, with the access log off', BOUNDED, async (t) => {
  const gw = await gatewayWithAccessLog(t, null, 2);
  await apply(gw, [['route', 'r', { directResponse: { statusCode: 200, body: 'ok' } }]]);
  process.kill(gw.pid, 'SIGHUP');
  process.kill(-gw.pid, 'SIGHUP');
  await waitFor('the HUP handled', () => gw.logLines().some((l) => String((l as Line).msg).startsWith('SIGHUP')));
  assert.equal((await request(`${gw.dataUrl}/`)).status, 200);
  const s = await clusterStatus(gw);
  assert.deepEqual(
    s.workers.map((w) => [w.state, w.restarts]),
    [
      ['listening', 0],
      ['listening', 0],
    ],
  );
  assert.equal(gw.exit(), null);
  assert.equal((await gw.stop()).code, 0);
});

const ESCAPED = String.raw`(?:[^"\\]|\\x[0-9A-F]{2})*`;
const COMBINED = new RegExp(String.raw`^(\S+) - - \[(\d{2}/[A-Z][a-z]{2}/\d{4}:\d{2}:\d{2}:\d{2} \+0000)\] "(${ESCAPED})" (\d{3}) (\d+) "(${ESCAPED})" "(${ESCAPED})"$`);

/** Requests whose path, query and headers try to end a field or a line early. */
const HOSTILE: string[][] = [
  ['GET /h/a%22b%0A%0D"c?q=%22%0A"\\ HTTP/1.1', 'Host: a.test', 'User-Agent: x" 200 1 "-" "-"\\', 'Referer: "\\"\\\\'],
  ['GET /h/%7B%22status%22:1%7D?x=\\"}{ HTTP/1.1', 'Host: a.test', 'User-Agent: ", "status": 999, "x": "', 'Referer: \\u000a'],
  ['GET /h/%E2%80%A8 HTTP/1.1', 'Host: a.test', 'User-Agent: ok'],
];

test('a combined line on stdout parses with the combined regex, whatever the client put in its path and headers', BOUNDED, async (t) => {
  const gw = await gatewayWithAccessLog(t, { format: 'combined' });
  await apply(gw, [['route', 'r', { directResponse: { statusCode: 200, body: 'ok' } }]]);
  for (const head of HOSTILE) assert.equal((await rawRequest(gw.dataPort, head)).status, 200, head[0]);
  const plain = await request(`${gw.dataUrl}/plain?token=s3cret`, { headers: { 'user-agent': 'curl/8', referer: 'https://r.test/' } });
  assert.equal(plain.status, 200);
  const lines = await waitFor('four access lines on stdout', () => {
    const l = gw.stdout().split('\n').filter((x) => x !== '' && !x.startsWith('switchyard ready'));
    return l.length >= HOSTILE.length + 1 ? l : undefined;
  });
  assert.equal(lines.length, HOSTILE.length + 1, 'one line per request');
  for (const l of lines) assert.match(l, COMBINED);
  const m = COMBINED.exec(lines.at(-1)!)!;
  assert.deepEqual(m.slice(1).filter((_, i) => i !== 1), ['127.0.0.1', 'GET /plain?token=[redacted] HTTP/1.1', '200', '2', 'https://r.test/', 'curl/8']);
  assert.ok(Math.abs(Date.parse(m[2]!.replace(/^(\d+)\/(\w+)\/(\d+):/, '$1 $2 $3 ')) - Date.now()) < 60_000, `time ${m[2]}`);
  assert.equal(COMBINED.exec(lines[0]!)![7], 'x\\x22 200 1 \\x22-\\x22 \\x22-\\x22\\x5C');
});

test('a hostile path, query or user agent cannot make two JSON lines or break one', BOUNDED, async (t) => {
  const gw = await gatewayWithAccessLog(t, { path: 'access.log' });
  const file = join(gw.dir, 'access.log');
  await apply(gw, [['route', 'r', { directResponse: { statusCode: 200, body: 'ok' } }]]);
  for (const head of HOSTILE) assert.equal((await rawRequest(gw.dataPort, head)).status, 200, head[0]);
  const lines = await waitFor('a line per request', () => (lineCount(file) >= HOSTILE.length ? jsonLines(file) : undefined));
  assert.equal(lines.length, HOSTILE.length);
  assert.deepEqual(
    lines.map((l) => [l.status, l.userAgent]),
    HOSTILE.map((h) => [200, h[2]!.slice('User-Agent: '.length)]),
    'each value whole in its own field',
  );
  assert.equal(lines[1]!.path, '/h/%7B%22status%22:1%7D?x=\\"}{');
});
