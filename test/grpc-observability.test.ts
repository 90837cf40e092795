import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { startGateway } from './helpers/gateway.js';
import { ROOT_KEY, apply } from './helpers/admin.js';
import { request } from './helpers/http.js';
import { accessLogLines } from './helpers/access-log-file.js';
import { ECHO_SERVICE, echoClient, startEchoServer, unary } from './helpers/grpc.js';
import { SERVER, startOtlpReceiver } from './helpers/otlp-receiver.js';
import { BOUNDED, waitFor } from './helpers/wait.js';

interface Line {
  path: string;
  route: string | null;
  method: string;
  status: number;
  grpcStatus: number | null;
  traceId: string | null;
}

/** A unary call to a method of `path` on `address`, bytes as they are: the status it ended with. */
function rawCall(address: string, path: string): Promise<grpc.status> {
  const client = new grpc.Client(address, grpc.credentials.createInsecure());
  const same = (b: Buffer) => b;
  return new Promise((resolve) => {
    client.makeUnaryRequest(path, same, same, Buffer.alloc(0), (err) => {
      client.close();
      resolve(err ? err.code : grpc.status.OK);
    });
  });
}

test('gRPC calls through a node-engine gateway over h2c: grpc-status in the access log, in switchyard_grpc_calls_total and on the server span', BOUNDED, async (t) => {
  const rx = await startOtlpReceiver(t);
  const echo = await startEchoServer(t);
  const gw = await startGateway(t, {
    engine: 'node',
    keys: [ROOT_KEY],
    edit: (c) => {
      (c.listen as Record<string, unknown>).h2c = true;
      c.log = { ...(c.log as Record<string, never>), access: { enabled: true, path: 'access.log' } };
      c.tracing = { endpoint: rx.url, serviceName: 'gw-grpc' };
    },
  });
  await apply(gw, [
    ['cluster', 'echo', { targets: [echo.address], protocol: 'h2c' }],
    ['route', 'echo', { pathPrefix: `/${ECHO_SERVICE}/`, cluster: 'echo', grpc: true }],
  ]);
  const address = `127.0.0.1:${gw.dataPort}`;
  const client = echoClient(address);
  t.after(() => client.close());

  // OK from the upstream, NOT_FOUND from the upstream, and the gateway's UNIMPLEMENTED for a path no route takes.
  assert.equal((await unary(client, { message: 'hi' })).message, 'hi');
  await assert.rejects(unary(client, { message: 'fail:5' }), (err: grpc.ServiceError) => err.code === grpc.status.NOT_FOUND);
  assert.equal(await rawCall(address, '/switchyard.test.Missing/Unary'), grpc.status.UNIMPLEMENTED);
  // Not a gRPC call: no grpc-status.
  assert.equal((await request(`${gw.dataUrl}/plain`)).status, 404);

  const lines = await waitFor('four access lines', () => {
    const l = accessLogLines<Line>(gw);
    return l.length >= 4 ? l : undefined;
  });
  const unaryLines = lines.filter((l) => l.path === `/${ECHO_SERVICE}/Unary`);
  assert.deepEqual(
    unaryLines.map((l) => [l.route, l.method, l.status, l.grpcStatus]).sort(),
    [
      ['echo', 'POST', 200, 0],
      ['echo', 'POST', 200, 5],
    ],
  );
  const missing = lines.find((l) => l.path === '/switchyard.test.Missing/Unary')!;
  assert.deepEqual([missing.route, missing.status, missing.grpcStatus], [null, 200, 12]);
  const plain = lines.find((l) => l.path === '/plain')!;
  assert.deepEqual([plain.status, plain.grpcStatus], [404, null]);

  // Workers ship their counts once a second: the supervisor's sums show up within about that.
  const series = await waitFor(
    'the gRPC counts on /metrics',
    async () => {
      const r = await request(`${gw.adminUrl}/metrics`, { token: gw.tokens.root });
      const found = r.text.split('\n').filter((l) => l.startsWith('switchyard_grpc_calls_total{'));
      return found.length >= 3 ? found.sort() : undefined;
    },
    { timeoutMs: 10_000 },
  );
  assert.deepEqual(series, [
    'switchyard_grpc_calls_total{tenant="",route="",grpc_status="12"} 1',
    'switchyard_grpc_calls_total{tenant="default",route="echo",grpc_status="0"} 1',
    'switchyard_grpc_calls_total{tenant="default",route="echo",grpc_status="5"} 1',
  ]);

  // The routed calls' SERVER spans (the gateway's own UNIMPLEMENTED comes before any route: no trace).
  const traced = unaryLines.map((l) => l.traceId!);
  const spans = await waitFor('the two calls\' server spans', () => {
    const s = rx.spans.filter((x) => x.kind === SERVER && traced.includes(x.traceId));
    return s.length >= 2 ? s : undefined;
  }, { timeoutMs: 10_000 });
  for (const line of unaryLines) {
    const span = spans.find((s) => s.traceId === line.traceId)!;
    assert.equal(span.name, 'POST echo');
    assert.equal(span.attributes['http.response.status_code'], 200);
    assert.equal(span.attributes['rpc.system'], 'grpc');
    assert.equal(span.attributes['rpc.service'], ECHO_SERVICE);
    assert.equal(span.attributes['rpc.method'], 'Unary');
    assert.equal(span.attributes['rpc.grpc.status_code'], line.grpcStatus);
    assert.equal(span.statusCode, 0, 'OK and NOT_FOUND are no server errors');
  }
});
