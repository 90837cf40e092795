// The gateway bench/idle-connections.mjs measures: 1 worker with the given limits, a
// directResponse route on "/", started through bench/guard.mjs (stopped if the bench dies),
// and its worker's PID found by parentage (guard → supervisor → worker), never by name.
import { randomBytes } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeBenchConfig } from './gateway.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));

function freePort(host) {
  return new Promise((resolve, reject) => {
    const s = createServer().once('error', reject);
    s.listen(0, host, () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** The PIDs whose parent is `pid` (Linux's /proc/<pid>/task/<tid>/children). */
function childrenOf(pid) {
  const tasks = readdirSync(`/proc/${pid}/task`);
  return tasks.flatMap((t) => readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number));
}

/** Resolves with { dataPort, worker } once the route is published; `procs` stops it. */
export async function startIdleGateway(procs, { host, maxConnections, headerTimeoutMs }) {
  const [dataPort, adminPort] = [await freePort(host), await freePort(host)];
  const token = randomBytes(30).toString('base64url');
  // idleTimeoutS: the idle connections must outlive the run (about 10 s).
  const configFile = writeBenchConfig(procs, 'switchyard-idle-', host, dataPort, adminPort, { limits: { maxConnections, headerTimeoutMs, idleTimeoutS: 300 } });
  const cmd = [join(HERE, 'guard.mjs'), process.execPath, join(HERE, '..', 'bin', 'run.js'), 'run', '--config', configFile];
  const { child } = await procs.startNode('gateway', cmd, {
    env: { SY_BENCH_TOKEN: token },
    ready: /^switchyard ready data=(\S+) admin=(\S+) workers=(\d+) generation=(\d+)$/m,
    timeoutMs: 30_000,
  });
  const admin = async (method, path, body) => {
    const res = await fetch(`http://${host}:${adminPort}/api/v1/${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body && JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`admin ${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  await admin('POST', 'default/config/set/route/idle-direct', { directResponse: { statusCode: 200, body: 'hello' }, pathPrefix: '/' });
  if (!(await admin('POST', 'default/publish/go', {})).ok) throw new Error('publish failed');

  // The admin API's view must agree with the parentage read from /proc.
  const [supervisor, ...more] = childrenOf(child.pid);
  const workers = supervisor ? childrenOf(supervisor) : [];
  if (more.length || workers.length !== 1) throw new Error(`expected one supervisor with one worker, found ${supervisor} ${more} → ${workers}`);
  const status = await admin('GET', 'sys/cluster/status');
  if (status.supervisor?.pid !== supervisor || status.workers?.[0]?.pid !== workers[0]) {
    throw new Error(`/proc and the admin API disagree: ${supervisor}/${workers[0]} vs ${JSON.stringify(status).slice(0, 300)}`);
  }
  return { dataPort, worker: workers[0] };
}
