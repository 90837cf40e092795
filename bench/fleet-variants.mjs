// The data plane on a postgres:// volume against the same on virtual:// (the data plane never
// touches the store, so they should not differ), and a rate-limit route with scope cluster
// (Redis) against the same with scope node. One-worker gateways on the server's CPU, on the
// machine's PostgreSQL (127.0.0.1:5432, database test) and Redis (127.0.0.1:6379); left out,
// with a line saying so, when either is not there.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { startGateway } from './gateway.mjs';

const PG = process.env.BENCH_PG ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS = process.env.BENCH_REDIS ?? 'redis://127.0.0.1:6379';

/** A limit far above what one worker serves: the cost of counting, never a refusal. */
const limited = (scope) => [{ code: 'rate-limit', settings: { requestsPerSecond: 1_000_000, burst: 10_000_000, scope } }];

export async function fleetVariants(procs, { root, benchDir, host, upstreamPort, cpu, freePort, log }) {
  if (spawnSync('pg_isready', ['-h', '127.0.0.1', '-q']).status !== 0 || spawnSync('redis-cli', ['ping']).stdout?.toString().trim() !== 'PONG') {
    log('no fleet targets: they need PostgreSQL on 127.0.0.1:5432 and Redis on 127.0.0.1:6379');
    return [];
  }
  const schema = `bench_${process.pid}`;
  const redis = { url: REDIS, keyPrefix: `switchyard-bench-${process.pid}:` };
  const routes = [
    ['bench-rl-node', { cluster: 'bench-upstream', pathPrefix: '/rl-node', order: 10, steps: limited('node') }],
    ['bench-rl-cluster', { cluster: 'bench-upstream', pathPrefix: '/rl-cluster', order: 10, steps: limited('cluster') }],
  ];
  const variant = (volume) => startGateway(procs, { root, benchDir, host, upstreamPort, cpu, freePort, extra: { volume, redis }, routes });
  const onFile = await variant(`virtual://${join(procs.tmp('switchyard-bench-volume-'), 'bench.db')}`);
  const onPg = await variant(`${PG}?schema=${schema}`);
  procs.onStop(() => spawnSync('psql', [PG, '-q', '-c', `DROP SCHEMA IF EXISTS ${schema} CASCADE`], { stdio: 'ignore' }));
  return [
    { key: 'fleetVirtual', label: 'gateway cluster route, virtual:// volume', url: `${onFile.data}/`, pid: onFile.pid },
    { key: 'fleetPostgres', label: 'gateway cluster route, postgres:// volume', url: `${onPg.data}/`, pid: onPg.pid },
    { key: 'rateLimitNode', label: 'rate-limit route, scope node', url: `${onFile.data}/rl-node`, pid: onFile.pid },
    { key: 'rateLimitCluster', label: 'rate-limit route, scope cluster (Redis)', url: `${onFile.data}/rl-cluster`, pid: onFile.pid },
  ];
}
