import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GenerationRequests } from '../../src/worker/generation-requests.js';
import { GrpcCall } from '../../src/worker/grpc/grpc-call.js';
import { RequestFlow } from '../../src/worker/flow.js';
import { stepError } from '../../src/steps/reply.js';
import { recordedExchange } from '../helpers/recording-downstream.js';

// A gRPC call's own answers on a real Exchange: HTTP 200, the status as trailers on h2 and
// in the head on HTTP/1.1, the code and trace id in grpc-message; the deadline's status.

const env = { traceId: () => 'trace-1', log: { warn() {} }, metrics: null, requestIdHeader: null };

function grpcExchange(contentType: string, h2: boolean) {
  const { ex, down } = recordedExchange({ method: 'POST', headers: [['content-type', contentType]] });
  assert.equal(ex.grpcRequest, true);
  ex.grpc = new GrpcCall(contentType, h2);
  return { ex, down };
}

const fields = (h: readonly (readonly [string, string])[] | null) => Object.fromEntries(h ?? []);

test('a refusal over h2: HTTP 200, content-type kept, grpc-status and grpc-message as trailers', () => {
  const { ex, down } = grpcExchange('application/grpc+proto', true);
  ex.begin(null, new GenerationRequests(() => {}), env, null);
  ex.replyError('Svc.Data.NoRoute');
  assert.equal(down.heads.length, 1);
  assert.equal(down.heads[0]!.status, 200);
  assert.deepEqual(fields(down.heads[0]!.headers), { 'content-type': 'application/grpc+proto' });
  assert.deepEqual(fields(down.trailers), { 'grpc-status': '12', 'grpc-message': 'Svc.Data.NoRoute: No route matches the request (traceId trace-1)' });
  assert.equal(ex.grpc!.status, 12);
  assert.equal(ex.finalStatus, 200);
  assert.equal(ex.finished, true);
});

test('gRPC-Web, and gRPC over HTTP/1.1: the status in the head, no trailers', () => {
  for (const [type, h2] of [['application/grpc-web-text', false], ['application/grpc-web+proto', true], ['application/grpc', false]] as const) {
    const { ex, down } = grpcExchange(type, h2);
    ex.begin(null, new GenerationRequests(() => {}), env, null);
    ex.replyError('Svc.Data.UpstreamBusy');
    assert.deepEqual(fields(down.heads[0]!.headers), { 'content-type': type, 'grpc-status': '14', 'grpc-message': "Svc.Data.UpstreamBusy: Every connection to this cluster's upstreams is busy and the wait for one is over; retry shortly (traceId trace-1)" }, type);
    assert.equal(down.trailers, null);
  }
});

test("a step's refusal is the call's status; what a step serves goes out as it is", async () => {
  const { ex, down } = grpcExchange('application/grpc', true);
  const flow = new RequestFlow(ex);
  ex.begin(flow, new GenerationRequests(() => {}), env, null);
  const refusal = stepError('Svc.Data.RateLimited');
  ex.requestSteps(() => refusal, () => assert.fail('not forwarded'), () => {});
  assert.deepEqual(fields(down.trailers), { 'grpc-status': '8', 'grpc-message': 'Svc.Data.RateLimited: Rate limit exceeded (traceId trace-1)' });
});

test('the deadline: DEADLINE_EXCEEDED as trailers after the messages relayed, and the work cancelled', async () => {
  const { ex, down } = grpcExchange('application/grpc', true);
  ex.begin(null, new GenerationRequests(() => {}), env, null);
  let cancelled = 0;
  ex.onAbort(() => cancelled++);
  // Messages are flowing when the deadline passes.
  ex.writeHead(200, undefined, [['content-type', 'application/grpc']]);
  ex.write(Buffer.from([0, 0, 0, 0, 1, 9]), null, () => {});
  assert.equal(ex.grpc!.startDeadline('20m', () => ex.endGrpc(504, 'Svc.Data.DeadlineExceeded')), 20);
  await new Promise((r) => setTimeout(r, 60));
  assert.deepEqual(fields(down.trailers), { 'grpc-status': '4', 'grpc-message': "Svc.Data.DeadlineExceeded: The call's deadline (its grpc-timeout) passed before the upstream's answer ended (traceId trace-1)" });
  assert.equal(cancelled, 1, "the upstream call is cancelled as a client's leaving would");
  assert.equal(ex.finished, true);
});

test('an answer that ended first stops the deadline', async () => {
  const { ex, down } = grpcExchange('application/grpc', true);
  ex.begin(null, new GenerationRequests(() => {}), env, null);
  let fired = 0;
  ex.grpc!.startDeadline('30m', () => fired++);
  ex.writeHead(200, undefined, [['content-type', 'application/grpc']]);
  ex.end([['grpc-status', '0']]);
  await new Promise((r) => setTimeout(r, 60));
  assert.equal(fired, 0);
  assert.deepEqual(fields(down.trailers), { 'grpc-status': '0' });
});
