import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startGateway } from './helpers/gateway.js';
import { startOtlpReceiver, SERVER } from './helpers/otlp-receiver.js';
import { ROOT_KEY, apply } from './helpers/admin.js';
import { request } from './helpers/http.js';
import { BOUNDED, sleep, waitFor } from './helpers/wait.js';
import { accessLogLine } from './helpers/access-log-file.js';
import type { Json } from './helpers/json.js';

/**
 * An upstream whose `/stall` answer sends its head and the first body bytes, then nothing
 * more (its length promises far more); `/cut` does the same, then cuts its connection;
 * `/fail` answers 500; anything else 200.
 */
async function stallingUpstream(t: { after: (fn: () => unknown) => void }): Promise<string> {
  const held: ServerResponse[] = [];
  const server = createServer((req, res) => {
    req.resume();
    if (req.url?.startsWith('/stall')) {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '1000000' });
      res.write('x'.repeat(100));
      held.push(res);
    } else if (req.url?.startsWith('/cut')) {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '1000000' });
      res.write('x'.repeat(100));
      setTimeout(() => res.destroy(), 100);
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

/** Sends a GET for `path` and reads what comes until the connection closes. */
function readToClose(port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let got = '';
    const s = connect(port, '127.0.0.1', () => s.write(`GET ${path} HTTP/1.1\r\nhost: x\r\n\r\n`));
    const timer = setTimeout(() => {
      s.destroy();
      reject(new Error(`the connection was not closed within 5 s: ${JSON.stringify(got.slice(0, 200))}`));
    }, 5_000);
    s.on('data', (c: Buffer) => (got += c.toString('latin1')));
    s.on('close', () => {
      clearTimeout(timer);
      resolve(got);
    });
    s.on('error', () => undefined);
  });
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

test('one final status per request, the same in the metrics, both access logs, the trace and the circuit breaker', BOUNDED, async (t) => {
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
    ['route', 'r', { cluster: 'up', steps: [{ code: 'access-log', settings: {} }, { code: 'circuit-breaker', settings: { failures: 2, windowMs: 60_000, openMs: 400 } }] }],
    ['route', 'cut', { pathPrefix: '/cut', cluster: 'up', steps: [{ code: 'access-log', settings: {} }] }],
  ]);

  /** The status each consumer saw of the one request to `path`: the access-log step, the access log file, the trace, the metrics of `route` (series other than `skip`). */
  const seen = async (path: string, route: string, skip: string | null) => {
    const step = await waitFor(`the access-log step line of ${path}`, () => gw.logLines().find((l) => (l as { access?: boolean }).access === true && (l as { path?: string }).path === path) as { status: number } | undefined);
    const line = await accessLogLine(gw, path);
    const spans = await rx.waitForSpans(`the server span of ${path}`, (s) => s.some((x) => x.kind === SERVER && x.attributes['url.path'] === path));
    const span = spans.find((x) => x.kind === SERVER && x.attributes['url.path'] === path)!;
    const series = await waitFor(`the counts of route ${route} shipped`, async () => {
      const m = (await request(`${gw.adminUrl}/metrics`, { token: gw.tokens.root })).text;
      const lines = m.split('\n').filter((l) => l.startsWith('switchyard_requests_total{') && l.includes(`route="${route}"`) && (skip === null || !l.includes(skip)));
      return lines.length > 0 ? lines : undefined;
    });
    return { step: step.status, file: line.status, trace: span.attributes['http.response.status_code'], traceError: span.statusCode === 2, metrics: series };
  };

  await t.test('a client that leaves after the response head: 499 everywhere, and the breaker decides nothing on it', async () => {
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

    // The route's other requests are 5xx (the 500s and the breaker's 503s): its only 4xx is the 499, and no 2xx.
    const s = await seen('/stall', 'r', 'status_class="5xx"');
    assert.deepEqual(
      { step: s.step, file: s.file, trace: s.trace, metrics: s.metrics },
      { step: 499, file: 499, trace: 499, metrics: ['switchyard_requests_total{tenant="default",route="r",method="GET",status_class="4xx"} 1'] },
    );
  });

  await t.test('an upstream that cuts its answer after the head: the failure\'s 502 everywhere, though the client saw a 200 head', async () => {
    const got = await readToClose(gw.dataPort, '/cut');
    assert.match(got, /^HTTP\/1\.1 200/, 'the head went out before the upstream failed');
    assert.ok(got.length < 1_000_000, 'the body was cut');
    const s = await seen('/cut', 'cut', null);
    assert.deepEqual(s, { step: 502, file: 502, trace: 502, traceError: true, metrics: ['switchyard_requests_total{tenant="default",route="cut",method="GET",status_class="5xx"} 1'] });
  });
});
