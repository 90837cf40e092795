import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RequestObserver, type RecordSink } from '../../src/worker/observe/observer.js';
import { DataMetrics } from '../../src/worker/observe/data-metrics.js';
import type { RouteMeter } from '../../src/worker/observe/meters.js';
import type { RequestRecord } from '../../src/worker/observe/request-record.js';
import { GrpcCall } from '../../src/worker/grpc/grpc-call.js';
import { DataMetricsTotals } from '../../src/supervisor/data-metrics-totals.js';
import { Exposition } from '../../src/shared/metrics-exposition.js';
import { servedKeys } from '../../src/contracts/metrics.js';
import type { CompiledGeneration } from '../../src/contracts/generation.js';
import type { Exchange } from '../../src/worker/exchange.js';

/** An exchange as the observer reads it when it ended: a gRPC call when `grpc` is given (its status as the call saw it). */
function ended(meter: RouteMeter | null, finalStatus: number, grpc?: { status: number | null }): Exchange {
  let call: GrpcCall | null = null;
  if (grpc !== undefined) {
    call = new GrpcCall('application/grpc+proto', true);
    call.status = grpc.status;
  }
  const ex = { meter, finalStatus, startedAt: performance.now(), method: 'POST', bytesReceived: 7, bytesSent: 9, upstream: null, upstreamMs: null, logged: true, grpc: call };
  return ex as unknown as Exchange;
}

function sink(): RecordSink & { written: RequestRecord[] } {
  const written: RequestRecord[] = [];
  return { written, sampled: () => true, write: (r) => void written.push(r) };
}

/** The supervisor's exposition of `totals`: `name{labels}` -> value. */
function samples(totals: DataMetricsTotals, name: string): Map<string, number> {
  const out = new Exposition();
  totals.write(out);
  const found = new Map<string, number>();
  for (const line of out.text().split('\n')) {
    const m = /^(\w+)(\{[^}]*\}) (\S+)$/.exec(line);
    if (m !== null && m[1] === name) found.set(m[2]!, Number(m[3]));
  }
  return found;
}

test('gRPC calls count by route and the grpc-status their client got, summed over workers; other requests are not gRPC calls', () => {
  const a = new DataMetrics();
  const b = new DataMetrics();
  const obsA = new RequestObserver(a, true, sink());
  const obsB = new RequestObserver(b, true, sink());
  const echo = a.route('default', 'echo');
  obsA.exchangeEnded(ended(echo, 200, { status: 0 }));
  obsA.exchangeEnded(ended(echo, 200, { status: 5 }));
  obsA.exchangeEnded(ended(echo, 200, { status: 42 })); // a number outside gRPC's codes, from an upstream
  obsA.exchangeEnded(ended(echo, 200, { status: null })); // the answer carried no grpc-status
  obsA.exchangeEnded(ended(echo, 499, { status: 0 })); // the client left before the trailers: it never read the 0
  obsA.exchangeEnded(ended(a.route('default', 'web'), 200)); // not a gRPC call
  obsA.exchangeEnded(ended(null, 200, { status: 12 })); // no route: the gateway's UNIMPLEMENTED
  obsB.exchangeEnded(ended(b.route('default', 'echo'), 200, { status: 0 }));

  const totals = new DataMetricsTotals();
  totals.add(a.take()!);
  totals.add(b.take()!);
  assert.deepEqual(
    Object.fromEntries(samples(totals, 'switchyard_grpc_calls_total')),
    {
      '{tenant="default",route="echo",grpc_status="0"}': 2,
      '{tenant="default",route="echo",grpc_status="5"}': 1,
      '{tenant="default",route="echo",grpc_status="other"}': 1,
      '{tenant="default",route="echo",grpc_status="none"}': 2,
      '{tenant="",route="",grpc_status="12"}': 1,
    },
  );
  // Every call is also a request of its route, by its HTTP status (200, or 499 for the one whose client left).
  const requests = samples(totals, 'switchyard_requests_total');
  assert.equal(requests.get('{tenant="default",route="echo",method="POST",status_class="2xx"}'), 5);
  assert.equal(requests.get('{tenant="default",route="echo",method="POST",status_class="4xx"}'), 1);
  assert.equal(requests.get('{tenant="default",route="web",method="POST",status_class="2xx"}'), 1);

  // Workers ship what moved since their last shipment: the supervisor's counters only grow.
  assert.equal(a.take(), null, 'nothing moved');
  obsA.exchangeEnded(ended(echo, 200, { status: 5 }));
  const delta = a.take()!;
  assert.deepEqual(delta.routes.map((r) => [r.route, r.grpc]), [['echo', [[5, 1]]]]);
  totals.add(delta);
  assert.equal(samples(totals, 'switchyard_grpc_calls_total').get('{tenant="default",route="echo",grpc_status="5"}'), 2);
  obsA.exchangeEnded(ended(echo, 200));
  assert.equal(a.take()!.routes[0]!.grpc, undefined, 'a shipment without gRPC calls carries no gRPC counts');

  // A route the served generation no longer has loses its gRPC series with the others.
  const gen = { format: 1, tenants: { default: { routes: [{ name: 'web' }] } }, hostOwners: {}, clusters: {} } as unknown as CompiledGeneration;
  totals.keepOnly(servedKeys(gen));
  assert.deepEqual([...samples(totals, 'switchyard_grpc_calls_total').keys()], ['{tenant="",route="",grpc_status="12"}']);
});

test("an access log record carries the call's grpc-status: the one its client got, none when it left first, null for other requests", () => {
  const s = sink();
  const observer = new RequestObserver(new DataMetrics(), false, s);
  observer.exchangeEnded(ended(null, 200, { status: 5 }));
  observer.exchangeEnded(ended(null, 499, { status: 0 }));
  observer.exchangeEnded(ended(null, 200));
  assert.deepEqual(
    s.written.map((r) => [r.status, r.grpcStatus]),
    [
      [200, 5],
      [499, null],
      [200, null],
    ],
  );
});
