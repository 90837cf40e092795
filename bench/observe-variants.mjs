// The same gateway cluster route with the observability settings switched: everything
// off (no metrics, no request id), the access log on (to a file), tracing at sample 1.0
// (to an OTLP/HTTP sink). Each is its own one-worker gateway on the server's CPU; the
// default gateway (metrics and request id on) is run.mjs's `gatewayCluster`.
import { join } from 'node:path';
import { startGateway } from './gateway.mjs';

export async function observeVariants(procs, { root, benchDir, host, upstreamPort, cpu, loadCpu, freePort }) {
  const sink = await procs.startNode('otlp-sink', [join(benchDir, 'otlp-sink.mjs'), String(await freePort())], { cpu: loadCpu });
  const variant = (extra) => startGateway(procs, { root, benchDir, host, upstreamPort, cpu, freePort, extra });
  const off = await variant({ metrics: { enabled: false }, requestId: { enabled: false } });
  const accessFile = join(procs.tmp('switchyard-bench-access-'), 'access.log');
  const logged = await variant({ log: { level: 'warn', access: { enabled: true, path: accessFile } } });
  const traced = await variant({ tracing: { endpoint: `http://${host}:${sink.match[1]}/v1/traces`, sampleRatio: 1 } });
  return [
    { key: 'observeOff', label: 'gateway cluster route, metrics and request id off', url: `${off.data}/`, pid: off.pid },
    { key: 'observeAccessLog', label: 'gateway cluster route, access log on (file)', url: `${logged.data}/`, pid: logged.pid },
    { key: 'observeTracing', label: 'gateway cluster route, tracing at sample 1.0', url: `${traced.data}/`, pid: traced.pid },
  ];
}
