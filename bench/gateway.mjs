// The gateway under test: 1 worker, memory: volume, started through bench/guard.mjs (the
// gateway does not watch its parent; the guard stops it if run.mjs dies), with three
// routes published through the admin API: "/" → the upstream cluster, "/direct" → a
// directResponse, "/steps" → the same cluster behind the five steps of issue 4. Given a
// certificate, it also listens on a TLS port serving it as the `default` cert entity (wrk
// sends the URL's IP as SNI); given a WebSocket echo upstream, "/ws" proxies WebSockets to it.
// `engine` sets worker.json's listen.engine (left out for a checkout older than the engines).
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { benchRoutes } from './fixtures.mjs';

/**
 * A one-worker worker.json in a temp folder of `procs` (memory volume, a `*` root key read
 * from SY_BENCH_TOKEN, warn logs), with `extra` fields added; returns its path.
 */
export function writeBenchConfig(procs, prefix, host, dataPort, adminPort, extra = {}) {
  const configFile = join(procs.tmp(prefix), 'worker.json');
  writeFileSync(
    configFile,
    JSON.stringify({
      volume: 'memory:',
      listen: { port: dataPort, host },
      admin: { listen: `${host}:${adminPort}`, keys: [{ id: 'root', tokenEnv: 'SY_BENCH_TOKEN', scopes: ['*'] }] },
      workers: 1,
      log: { level: 'warn' },
      drain: { graceMs: 1_000 },
      ...extra,
    }),
  );
  return configFile;
}

/**
 * Resolves with { data, tls, generation, pid, child } once the routes are published (`tls`: the TLS
 * port's base URL, null without `cert`: {certificate, privateKey}); `engine`: 'uws' or 'node'; `h2c`:
 * listen.h2c (node engine); `extra`: worker.json fields; `clusters`: more [name, document] clusters;
 * `routes`: more [name, document] routes (to `bench-upstream`, the upstream's cluster, or to one of `clusters`).
 */
export async function startGateway(procs, { root, benchDir, host, upstreamPort, cpu, freePort, checked = false, cert = null, wsUpstreamPort = null, engine = null, h2c = false, extra = {}, clusters = [], routes = [] }) {
  const [dataPort, adminPort] = [await freePort(), await freePort()];
  const tlsPort = cert ? await freePort() : null;
  const token = randomBytes(30).toString('base64url'); // 40 characters
  const listenFields = { ...(engine ? { engine } : {}), ...(h2c ? { h2c: true } : {}), ...(tlsPort ? { tls: { port: tlsPort } } : {}) };
  const listen = Object.keys(listenFields).length ? { listen: { port: dataPort, host, ...listenFields } } : {};
  const configFile = writeBenchConfig(procs, 'switchyard-bench-', host, dataPort, adminPort, { ...listen, ...extra });
  const gatewayCmd = [process.execPath, join(root, 'bin', 'run.js'), 'run', '--config', configFile];
  const { child, match } = await procs.startNode('gateway', [join(benchDir, 'guard.mjs'), ...gatewayCmd], {
    env: { SY_BENCH_TOKEN: token },
    cpu, // inherited by the supervisor and its worker
    ready: /^switchyard ready data=(\S+) admin=(\S+) workers=(\d+) generation=(\d+)$/m,
    timeoutMs: 30_000,
  });
  const [, data, admin] = match;

  const api = async (path, body) => {
    const res = await request(`${admin}/api/v1/default/${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await res.body.text();
    if (res.statusCode >= 300) throw new Error(`gateway admin ${path}: ${res.statusCode} ${text}`);
    return JSON.parse(text);
  };
  await api('config/set/cluster/bench-upstream', { targets: [`${host}:${upstreamPort}`] });
  for (const [name, doc] of benchRoutes('bench-upstream')) await api(`config/set/route/${name}`, doc);
  if (checked) {
    // The same upstream twice (its IPv4-mapped IPv6 address is a second target), probed every second.
    const targets = [`${host}:${upstreamPort}`, `[::ffff:${host}]:${upstreamPort}`];
    await api('config/set/cluster/bench-checked', { targets, healthCheck: { path: '/', intervalMs: 1_000 } });
    await api('config/set/route/bench-checked', { cluster: 'bench-checked', pathPrefix: '/checked', order: 10 });
  }
  if (cert) await api('config/set/cert/bench-tls', { certificate: cert.certificate, privateKey: cert.privateKey, default: true });
  if (wsUpstreamPort) {
    await api('config/set/cluster/bench-ws', { targets: [`${host}:${wsUpstreamPort}`] });
    await api('config/set/route/bench-ws', { cluster: 'bench-ws', pathPrefix: '/ws', order: 10, websocket: true });
  }
  for (const [name, doc] of clusters) await api(`config/set/cluster/${name}`, doc);
  for (const [name, doc] of routes) await api(`config/set/route/${name}`, doc);
  const published = await api('publish/go', {});
  if (!published.ok) throw new Error(`gateway publish failed: ${JSON.stringify(published)}`);
  return { data, tls: tlsPort ? `https://${host}:${tlsPort}` : null, generation: published.generation, pid: child.pid, child };
}
