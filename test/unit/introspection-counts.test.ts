import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DataMetrics } from '../../src/worker/observe/data-metrics.js';
import { DataMetricsTotals } from '../../src/supervisor/data-metrics-totals.js';
import { Exposition } from '../../src/shared/metrics-exposition.js';
import { EndpointOutage } from '../../src/steps/identity/endpoint-outage.js';

test('introspection counts go from a worker meter through its delta to the totals, as two families; a route without any has no series', () => {
  const meters = new DataMetrics();
  const api = meters.route('acme', 'api');
  meters.route('acme', 'other');
  for (const e of ['active', 'active', 'inactive', 'error', 'stale', 'unavailable', 'unavailable'] as const) meters.introspected(api, e);
  const delta = meters.take()!;
  assert.deepEqual(delta.routes.find((r) => r.route === 'api')!.introspection, [[0, 2], [1, 1], [2, 1], [3, 1], [4, 2]]);
  meters.introspected(api, 'active');
  const next = meters.take()!;
  assert.deepEqual(next.routes[0]!.introspection, [[0, 1]], 'counted again from zero after a shipment');

  const totals = new DataMetricsTotals();
  totals.add(delta);
  totals.add(next);
  const out = new Exposition();
  totals.write(out);
  const lines = out.text().split('\n').filter((l) => l.startsWith('switchyard_introspection_'));
  assert.deepEqual(lines, [
    'switchyard_introspection_calls_total{tenant="acme",route="api",result="active"} 3',
    'switchyard_introspection_calls_total{tenant="acme",route="api",result="inactive"} 1',
    'switchyard_introspection_calls_total{tenant="acme",route="api",result="error"} 1',
    'switchyard_introspection_fail_static_total{tenant="acme",route="api",outcome="stale"} 1',
    'switchyard_introspection_fail_static_total{tenant="acme",route="api",outcome="unavailable"} 2',
  ]);
});

test('an outage is logged when it starts, at its first stale pass and first refusal, and when it ends: never per request', () => {
  const lines: [string, string, object][] = [];
  const log = { info: (o: object, m: string) => lines.push(['info', m, o]), warn: (o: object, m: string) => lines.push(['warn', m, o]) };
  const outage = new EndpointOutage(log, { step: 'oauth-introspection', route: 'api' });
  outage.recovered(0);
  assert.equal(lines.length, 0, 'nothing to recover from');
  for (let i = 0; i < 100; i++) {
    outage.failed('connect ECONNREFUSED', 1_000 + i);
    outage.servedStale();
    outage.refusedUnavailable();
  }
  assert.equal(outage.down, true);
  assert.deepEqual(lines.map(([level, msg]) => `${level} ${msg.split(':')[0]}`), [
    'warn introspection endpoint gives no usable answer',
    'warn introspection',
    'warn introspection',
  ]);
  assert.match(lines[1]![1], /serving stale answers/);
  assert.match(lines[2]![1], /refusing tokens/);
  assert.deepEqual(lines[0]![2], { step: 'oauth-introspection', route: 'api', reason: 'connect ECONNREFUSED' });
  outage.recovered(5_000);
  outage.recovered(6_000);
  assert.equal(lines.length, 4);
  assert.deepEqual(lines[3]!.slice(0, 2), ['info', 'introspection endpoint answers again']);
  assert.deepEqual(lines[3]![2], { step: 'oauth-introspection', route: 'api', downMs: 4_000, staleAnswers: 100, refused: 100 });
  outage.failed('timeout', 7_000);
  assert.equal(lines.length, 5, 'a new outage is told again');
});
