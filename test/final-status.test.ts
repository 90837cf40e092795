import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startGateway } from './helpers/gateway.js';
import { startOtlpReceiver, SERVER } from './helpers/otlp-receiver.js';
import { ROOT_KEY, apply } from './helpers/admin.js';
import { request } from './helpers/http.js';
import { BOUNDED, sleep, waitFor } from './helpers/wait.js';
import type { Json } from './helpers/json.js';

/**
 * An upstream whose `/stall` answer sends its head and the first body bytes, then nothing
 * more (its length promises far more); `/fail` answers 500; anything else 200.
 */
async function stallingUpstream(t: { after: (fn: () => unknown) => void }): Promise<string> {
  const held: ServerResponse[] = [];
  const server = createServer((req, res) => {
    req.resume();
    if (req.url?.startsWith('/stall')) {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '1000000' });
      res.write('x'.repeat(100));
      held.push(res);
    } else if (req.url?.startsWith('/fail')) res.writeHead(500).end('failed');
    else res.writeHead(200).end('ok');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => {
    for (const res of held) res.destroy();
    server.closeAllConnections();
    return new Promise<void>((r) => server.close(() => r()));
  });
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Sends a GET for `path`, reads until the response head arrived, then leaves (the socket destroyed). */
function leaveAfterHead(port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let got = '';
    const s = connect(port, '127.0.0.1', () => s.write(`GET ${path} HTTP/1.1\r\nhost: x\r\n\r\n`));
    const timer = setTimeout(() => {
      s.destroy();
      reject(new Error(`no response head within 5 s: ${JSON.stringify(got)}`));
    }, 5_000);
    s.on('data', (c: Buffer) => {
      got += c.toString('latin1');
      if (!got.includes('\r\n\r\n')) return;
      clearTimeout(timer);
      s.destroy();
      resolve(got.slice(0, got.indexOf('\r\n\r\n')));
    });
    s.on('error', reject);
  });
}

test('a client that leaves after the response head ends with 499 in the metrics, both access logs, the trace and the circuit breaker', BOUNDED, async (t) => {
  const rx = await startOtlpReceiver(t);
  const target = await stallingUpstream(t);
  const gw = await startGateway(t, {
    workers: 1, // the breaker's state is per worker
    keys: [ROOT_KEY],
    edit: (c) => {
      c.log = { ...(c.log as Record<string, Json>), access: { enabled: true, path: 'access.log' } };
      c.tracing = { endpoint: rx.url, serviceName: 'final-status' };
    },
  });
  await apply(gw, [
    ['cluster', 'up', { targets: [target] }],
    [
      'route',
      'r',
      {
        cluster: 'up',
        steps: [
          { code: 'access-log', settings: {} },
          { code: 'circuit-breaker', settings: { failures: 2, windowMs: 60_000, openMs: 400 } },
        ],
      },
    ],
  ]);

  // Two 500s open the circuit; once openMs passed, the next request is its half-open probe.
  for (let i = 0; i < 2; i++) assert.equal((await request(`${gw.dataUrl}/fail`)).status, 500);
  assert.equal((await request(`${gw.dataUrl}/fail`)).status, 503, 'the circuit opened');
  await sleep(600);

  // The probe: its head (200) reaches the client, which leaves before the body ends.
  const head = await leaveAfterHead(gw.dataPort, '/stall');
  assert.match(head, /^HTTP\/1\.1 200/, 'the client got the head');

  // The breaker saw 499, which decides nothing: still half-open, so the next request
  // probes again and its 500 opens the circuit at once. Had it seen 200 the circuit would
  // be closed, and one 500 of the two it takes would leave it closed.
  assert.equal((await request(`${gw.dataUrl}/fail`)).status, 500, 'the next request was let through as a probe');
  const after = await request(`${gw.dataUrl}/ok`);
  assert.equal(after.status, 503, `the failed probe opened the circuit: ${after.text}`);
  assert.equal((after.json as { code: string }).code, 'Svc.Data.CircuitOpen');

  // The access-log step's line.
  const stepLine = await waitFor('the access-log step line of /stall', () => gw.logLines().find((l) => (l as { access?: boolean; path?: string }).access === true && (l as { path: string }).path === '/stall') as { status: number } | undefined);
  assert.equal(stepLine.status, 499, 'the access-log step');

  // The worker's access log file.
  const file = join(gw.dir, 'access.log');
  const fileLine = await waitFor('the access log line of /stall', () => {
    if (!existsSync(file)) return undefined;
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { path: string; status: number })
      .find((l) => l.path === '/stall');
  });
  assert.equal(fileLine.status, 499, 'the worker access log');

  // The trace's SERVER span.
  const spans = await rx.waitForSpans('the server span of /stall', (s) => s.some((x) => x.kind === SERVER && x.attributes['url.path'] === '/stall'));
  const span = spans.find((x) => x.kind === SERVER && x.attributes['url.path'] === '/stall')!;
  assert.equal(span.attributes['http.response.status_code'], 499, 'the trace');

  // The metrics: the route's 4xx (499) and no 2xx for GET (/ok, /fail and the refusals are 5xx or 503).
  const series = await waitFor('the route\'s counts shipped', async () => {
    const m = (await request(`${gw.adminUrl}/metrics`, { token: gw.tokens.root })).text;
    const lines = m.split('\n').filter((l) => l.startsWith('switchyard_requests_total{') && l.includes('route="r"'));
    return lines.some((l) => l.includes('status_class="4xx"')) ? lines : undefined;
  });
  assert.deepEqual(
    series.filter((l) => !l.includes('status_class="5xx"')),
    ['switchyard_requests_total{tenant="default",route="r",method="GET",status_class="4xx"} 1'],
    `the metrics:\n${series.join('\n')}`,
  );
});
