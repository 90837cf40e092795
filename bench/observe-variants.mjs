// The same gateway cluster route with the observability settings switched: everything
// off (no metrics, no request id), the defaults (metrics and request id on), the access log
// on (to a file), tracing at sample 1.0 (to an OTLP/HTTP sink). Each is its own one-worker
// gateway on the server's CPU. A second all-off gateway is the control: that pair differs
// by nothing but its processes.
//
// A process's first load sets its speed for its life: of two gateways of one build and one
// config, started together, the one loaded first read about 20 % less CPU per request
// afterwards, loaded at once, in 4 of 4 rounds (the other way round when the other went
// first); warmed up at once, the same pairs read 0.99–1.02. So every round runs on fresh
// processes, all warmed up at the same time before any is measured (`warm()`), and a
// ratio's median is over as many pairs of processes as rounds.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { startGateway } from './gateway.mjs';

const ALL_OFF = { metrics: { enabled: false }, requestId: { enabled: false } };

/** [key, label, worker.json fields] of each variant, given the access log's file and the tracing endpoint. */
const VARIANTS = [
  ['observeOff', 'gateway cluster route, metrics and request id off', () => ALL_OFF],
  ['observeOffTwin', 'the same, a second gateway (control)', () => ALL_OFF],
  ['observeDefaults', 'gateway cluster route, defaults (metrics, request id)', () => ({})],
  ['observeAccessLog', 'gateway cluster route, access log on (file)', ({ accessLog }) => ({ log: { level: 'warn', access: { enabled: true, path: accessLog } } })],
  ['observeTracing', 'gateway cluster route, tracing at sample 1.0', ({ sink }) => ({ tracing: { endpoint: sink, sampleRatio: 1 } })],
];

/** The variants' target keys, in the order they run. */
export const OBSERVE_KEYS = VARIANTS.map(([key]) => key);

/** Seconds of the at-once warm-up per variant (five gateways share one core: each gets about this much of it). */
const WARM_SECONDS_PER_VARIANT = 2;

/**
 * The variants `wanted(key)` asks for, as run.mjs targets ({ key, label, url, pid, observe });
 * `warm(load, headers)`: all of them loaded at once, none measured; `restart()`: every
 * variant stopped and started again, its target updated in place.
 */
export async function observeVariants(procs, { root, benchDir, host, upstreamPort, cpu, loadCpu, freePort, wanted }) {
  const sinkProcess = await procs.startNode('otlp-sink', [join(benchDir, 'otlp-sink.mjs'), String(await freePort())], { cpu: loadCpu });
  const sink = `http://${host}:${sinkProcess.match[1]}/v1/traces`;
  // One file for each start of the access log gateway, removed when it stopped (a round writes tens of MB).
  const logDir = procs.tmp('switchyard-bench-access-');
  let accessLog = null;
  const configs = VARIANTS.filter(([key]) => wanted(key));
  // `observe`: run.mjs measures these over BENCH_OBSERVE_SECONDS, after a warm-up at once.
  const targets = configs.map(([key, label]) => ({ key, label, url: null, pid: null, observe: true }));
  const children = [];
  const startAll = async () => {
    accessLog = join(logDir, `access-${Date.now()}.log`);
    for (const [i, [, , extra]] of configs.entries()) {
      const g = await startGateway(procs, { root, benchDir, host, upstreamPort, cpu, freePort, extra: extra({ accessLog, sink }) });
      Object.assign(targets[i], { url: `${g.data}/`, pid: g.pid });
      children[i] = g.child;
    }
  };
  await startAll();
  return {
    targets,
    async warm(load, headers) {
      const seconds = WARM_SECONDS_PER_VARIANT * targets.length;
      await Promise.all(targets.map((t) => load(t.url, seconds, headers)));
      return seconds;
    },
    async restart() {
      await Promise.all(children.map((c) => procs.stop(c)));
      rmSync(accessLog, { force: true });
      await startAll();
    },
  };
}
