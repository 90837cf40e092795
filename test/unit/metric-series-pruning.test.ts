import { test } from 'node:test';
import assert from 'node:assert/strict';
import { servedKeys } from '../../src/contracts/metrics.js';
import type { CompiledGeneration } from '../../src/contracts/generation.js';
import { DataMetricsTotals } from '../../src/supervisor/data-metrics-totals.js';
import { Exposition } from '../../src/shared/metrics-exposition.js';
import { DataMetrics } from '../../src/worker/observe/data-metrics.js';

/** A generation with these routes (of tenant `default`) and one cluster `default/c` with these targets. */
function generation(routes: string[], targets: string[]): CompiledGeneration {
  return {
    format: 1,
    tenants: { default: { routes: routes.map((name) => ({ name })) } },
    hostOwners: {},
    clusters: { 'default/c': { targets } },
  } as unknown as CompiledGeneration;
}

/** What one worker would ship after a request on each route and an answer from each target. */
function shipment(routes: string[], targets: string[]) {
  const m = new DataMetrics();
  for (const r of routes) m.ended(m.route('default', r), 'GET', 200, 0.01, 0, 2);
  m.ended(m.unmatched, 'GET', 404, 0.001, 0, 10);
  for (const t of targets) m.upstream('default/c', t).answered(5, 200);
  return m.take()!;
}

const routeLabels = (totals: DataMetricsTotals) => {
  const out = new Exposition();
  totals.write(out);
  const text = out.text();
  return {
    routes: [...new Set([...text.matchAll(/switchyard_requests_total\{tenant="[^"]*",route="([^"]*)"/g)].map((m) => m[1]))].sort(),
    targets: [...new Set([...text.matchAll(/switchyard_upstream_duration_seconds_count\{tenant="default",cluster="c",target="([^"]*)"/g)].map((m) => m[1]))].sort(),
  };
};

test('a tenant renaming its routes and targets at every publish does not pile up series: those no generation serves are dropped', () => {
  const totals = new DataMetricsTotals();
  for (let i = 0; i < 50; i++) {
    const routes = [`r${i}`, 'stays'];
    const targets = [`10.0.0.${i}:80`];
    totals.add(shipment(routes, targets));
    totals.keepOnly(servedKeys(generation(routes, targets)));
  }
  assert.deepEqual(routeLabels(totals), { routes: ['', 'r49', 'stays'], targets: ['10.0.0.49:80'] });
});

test('a worker forgets the meters of routes and targets the new generation does not serve', () => {
  const m = new DataMetrics();
  const old = m.route('default', 'old');
  m.route('default', 'kept');
  m.upstream('default/c', '10.0.0.1:80');
  m.keepOnly(servedKeys(generation(['kept'], ['10.0.0.2:80'])));
  assert.notEqual(m.route('default', 'old'), old, 'a route that comes back gets a new meter');
  // A request still running on the replaced generation holds the old meter: its count still ships.
  m.ended(old, 'GET', 200, 0.01, 0, 1);
  assert.deepEqual(m.take()!.routes.map((r) => r.route), ['old']);
});
