// From the rounds run.mjs measured to the figures it prints and writes: per-target
// medians, and the ratios as medians of per-round pairs, with their acceptance targets.
import { fmt, maxOrNull, median, table } from './table.mjs';

/**
 * Acceptance targets: the cluster route and directResponse, five steps, TLS against nginx,
 * WebSocket echo against the echo upstream direct, observability, the fleet's volume and
 * cluster-wide rate limits, the node engine against fastify, its HTTP/2 against nginx's
 * (an aim), this checkout's uws engine against a BENCH_COMPARE build, and gRPC unary calls
 * through the gateway against the gRPC upstream direct (an aim).
 */
export const TARGETS = {
  ...{ clusterVsBaseline: 3, directVsBareUws: 0.8, fiveStepsVsCluster: 0.85, fivePackageStepsVsCluster: 0.9, jwtVsCluster: 0.85, checkedVsCluster: 0.97, tlsVsNginxTls: 0.5, wsVsDirect: 0.5 },
  ...{ defaultsVsOff: 0.95, accessLogVsOff: 0.9, tracingVsOff: 0.8 },
  ...{ postgresVsVirtual: 0.98, clusterVsNodeRateLimit: 0.8 },
  ...{ nodeEngineVsBaseline: 1.1, nodeH2VsNginxH2: 0.4, clusterVsCompare: 0.97 },
  ...{ grpcUnaryVsDirect: 0.5 },
  ...{ dnsVsStaticPair: 0.97 },
};

// [key, label, numerator, denominator, target]
export const RATIOS = [
  ['gatewayClusterVsBaseline', 'gateway cluster / fastify baseline', 'gatewayCluster', 'baseline', TARGETS.clusterVsBaseline],
  ['gatewayClusterVsFloor', 'gateway cluster / floor (uWS + undici)', 'gatewayCluster', 'floor', null],
  ['floorVsBaseline', 'floor (uWS + undici) / fastify baseline', 'floor', 'baseline', null],
  ['nginxVsBaseline', 'nginx (reference) / fastify baseline', 'nginx', 'baseline', null],
  ['gatewayClusterVsNginx', 'gateway cluster / nginx (reference)', 'gatewayCluster', 'nginx', null],
  ['nodeClusterVsBaseline', 'node engine cluster route / fastify baseline', 'nodeCluster', 'baseline', TARGETS.nodeEngineVsBaseline],
  ['nodeClusterVsUwsCluster', 'node engine / uws engine (cluster route)', 'nodeCluster', 'gatewayCluster', null],
  ['gatewayClusterVsUpstream', 'gateway cluster / upstream direct', 'gatewayCluster', 'upstream', null],
  ['gatewayDirectVsBareUws', 'gateway directResponse / bare uWS', 'gatewayDirect', 'bareUws', TARGETS.directVsBareUws],
  ['gatewayStepsVsCluster', 'gateway 5 steps / gateway cluster route', 'gatewaySteps', 'gatewayCluster', TARGETS.fiveStepsVsCluster],
  ['gatewayPackageStepsVsCluster', 'gateway 5 no-op package steps / gateway cluster route', 'gatewayPackageSteps', 'gatewayCluster', TARGETS.fivePackageStepsVsCluster],
  ['gatewayJwtVsCluster', 'gateway jwt-auth (RS256) / gateway cluster route', 'gatewayJwt', 'gatewayCluster', TARGETS.jwtVsCluster],
  ['gatewayCheckedVsCluster', 'gateway checked cluster / gateway cluster', 'gatewayChecked', 'gatewayCluster', TARGETS.checkedVsCluster],
  ['gatewayTlsVsNginxTls', 'gateway TLS / nginx TLS (reference)', 'gatewayTls', 'nginxTls', TARGETS.tlsVsNginxTls],
  ['gatewayTlsVsCluster', 'gateway TLS / gateway cluster (plain)', 'gatewayTls', 'gatewayCluster', null],
  ['nginxTlsVsNginx', 'nginx TLS / nginx (plain)', 'nginxTls', 'nginx', null],
  ['nodeH2VsNginxH2', 'gateway h2 over TLS (node engine) / nginx h2 over TLS', 'nodeH2', 'nginxH2', TARGETS.nodeH2VsNginxH2],
  ['grpcUnaryGatewayVsDirect', 'gRPC unary calls: gateway / direct', 'grpcUnaryGateway', 'grpcUnaryDirect', TARGETS.grpcUnaryVsDirect],
  ['grpcStreamGatewayVsDirect', 'gRPC streamed messages: gateway / direct', 'grpcStreamGateway', 'grpcStreamDirect', null],
  ['gatewayWsVsDirect', 'gateway WebSocket echo / echo direct (messages)', 'gatewayWs', 'wsDirect', TARGETS.wsVsDirect],
  ['observeOffTwinVsOff', 'cluster route: all off, a second gateway / the first (control)', 'observeOffTwin', 'observeOff', null],
  ['observeDefaultsVsOff', 'cluster route: metrics + request id (defaults) / all off', 'observeDefaults', 'observeOff', TARGETS.defaultsVsOff],
  ['observeAccessLogVsOff', 'cluster route: access log on / all off', 'observeAccessLog', 'observeOff', TARGETS.accessLogVsOff],
  ['observeTracingVsOff', 'cluster route: tracing at 1.0 / all off', 'observeTracing', 'observeOff', TARGETS.tracingVsOff],
  ['nginxAccessLogVsNginx', 'nginx: JSON access log on / off (reference)', 'nginxAccessLog', 'nginx', null],
  ['fleetPostgresVsVirtual', 'cluster route: postgres:// volume / virtual:// volume', 'fleetPostgres', 'fleetVirtual', TARGETS.postgresVsVirtual],
  ['clusterDnsVsStaticPair', 'cluster of 2 targets: found by DNS / written as addresses', 'clusterDnsPair', 'clusterStaticPair', TARGETS.dnsVsStaticPair],
  ['rateLimitClusterVsNode', 'rate-limit route: scope cluster (Redis) / scope node', 'rateLimitCluster', 'rateLimitNode', TARGETS.clusterVsNodeRateLimit],
  ['clusterVsCompare', 'uws engine cluster route: this checkout / compare', 'gatewayCluster', 'compareCluster', TARGETS.clusterVsCompare],
  ['stepsVsCompare', '5 steps: this checkout / compare', 'gatewaySteps', 'compareSteps', null],
  ['directVsCompare', 'directResponse: this checkout / compare', 'gatewayDirect', 'compareDirect', null],
];

/** Per target: medians over the rounds, the worst round's steal, error totals, and every round. */
export function summarize(targets, samples) {
  const results = {};
  for (const t of targets) {
    const s = samples[t.key];
    results[t.key] = {
      label: t.label,
      url: t.url,
      rps: median(s.map((x) => x.rps)),
      p99Ms: median(s.map((x) => x.p99Ms)),
      serverCpuUsPerRequest: s.some((x) => x.serverCpuUsPerRequest === null) ? null : median(s.map((x) => x.serverCpuUsPerRequest)),
      // The worst round's share of the server's CPU taken by the hypervisor (a disturbed round shows here).
      stealPercentMax: maxOrNull(s.map((x) => Object.values(x.stealPercent)[0])),
      non2xx: s.reduce((a, x) => a + x.non2xx, 0),
      errors: s.reduce((a, x) => a + x.errors, 0),
      rounds: s,
    };
  }
  return results;
}

/** The ratios whose two targets both ran, each the median of its per-round pairs. */
export function pairedRatios(results) {
  const ratios = {};
  for (const [key, label, a, b, target] of RATIOS) {
    if (!results[a] || !results[b]) continue;
    // Paired: both targets of a round ran back to back, so drift between rounds cancels out.
    const perRound = results[a].rounds.map((r, i) => r.rps / results[b].rounds[i].rps);
    const value = median(perRound);
    ratios[key] = { label, value, ofMedians: results[a].rps / results[b].rps, perRound, target, pass: target === null ? null : value >= target };
  }
  return ratios;
}

/** The two printed tables: targets, then ratios with their verdicts. */
export function renderTables(targets, results, ratios) {
  const rows = [['target', 'requests/s', 'p99 ms', 'server CPU µs/req', 'steal % (max)', 'non-2xx', 'errors']];
  for (const t of targets) {
    const r = results[t.key];
    const steal = r.stealPercentMax === null ? '?' : fmt(r.stealPercentMax, 1);
    rows.push([r.label, fmt(r.rps), fmt(r.p99Ms, 2), r.serverCpuUsPerRequest === null ? '?' : fmt(r.serverCpuUsPerRequest, 1), steal, r.non2xx, r.errors]);
  }
  const rrows = [['ratio (requests/s)', 'value', 'per round', 'target', 'verdict']];
  for (const r of Object.values(ratios)) {
    rrows.push([r.label, r.value === null ? '?' : fmt(r.value, 2), r.perRound.map((x) => (x === null ? '?' : fmt(x, 2))).join(' '), r.target === null ? '-' : `>= ${fmt(r.target, 2)}`, r.pass === null ? '-' : r.pass ? 'pass' : 'FAIL']);
  }
  return `${table(rows)}\n\n${table(rrows)}`;
}
