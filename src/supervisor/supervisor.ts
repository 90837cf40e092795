import { DataMetricsTotals } from './data-metrics-totals.js';
import { servedKeys } from '../contracts/metrics.js';
import { observeSettings } from '../shared/gateway-config-observability.js';
import { availableParallelism } from 'node:os';
import { loadGatewayConfig, upstreamRules } from '../shared/gateway-config.js';
import { dataPlaneEngine } from '../shared/engine-choice.js';
import { tlsListenerSettings } from '../shared/gateway-config-listen.js';
import { uwsSupport } from '../shared/uws-support.js';
import { bracketed, parseHostPort } from '../shared/host-port.js';
import { createLogger } from '../shared/logger.js';
import { openVolume, shownVolume, type Volume } from '../store/volume.js';
import { createAdminServer } from '../admin/admin-server.js';
import { OPERATIONS } from '../admin/contract.js';
import { HANDLERS } from '../admin/handlers/index.js';
import { SystemKeyRing } from '../admin/system-keys.js';
import { SubKeyRing } from '../admin/keys/sub-key-ring.js';
import { KeyUsage } from '../admin/keys/key-usage.js';
import { AuthThrottle } from '../admin/auth-throttle.js';
import { TenantQuotas } from '../admin/tenant-quotas.js';
import { KeyRepo } from '../store/key-repo.js';
import { FleetFollower } from './fleet-follower.js';
import { ClusterRateLimits } from './cluster-rate-limits.js';
import { serveLeases } from './lease-serving.js';
import { lifecycle, listen, type Running } from './supervisor-lifecycle.js';
import { AuditRepo } from '../store/audit-repo.js';
import { BootError, EXIT } from './boot-error.js';
import { loadGatewaySteps } from './step-packages.js';
import { probePort } from './port-probe.js';
import { checkAccessLogFile } from './access-log-file.js';
import { BindError, WorkerPool } from './worker-pool.js';
import { WorkerGuards } from './worker-guards.js';
import { WorkerRestart } from './worker-restart.js';
import { reloadSteps, restampAtStart } from './step-builds.js';
import type { Services } from '../admin/services.js';
import { VERSION } from '../shared/version.js';
import { EntityRepo } from '../store/entity-repo.js';
import { GenerationRepo } from '../store/generation-repo.js';
import { PluginRepo } from '../store/plugin-repo.js';
import { Publisher } from './publisher.js';
import { reservedSecretEnv } from './reserved-secrets.js';
import { RateLimitLeases } from './rate-limit-leases.js';
import { HealthChecks, mergeTables } from './health-checks.js';
import { OutlierEjection } from './outlier-ejection.js';
import { InFlightQuery } from './in-flight-query.js';
import { WorkerLoadQuery } from './worker-load-query.js';
import { StoreCheck } from './store-check.js';
import { Readiness } from './readiness.js';
import { ReadinessPush } from './readiness-push.js';
import { shadowedReadyPath } from './ready-path-shadow.js';
import { installSecretBox, openStored, parseSealingKey, SecretBox } from '../shared/secret-box.js';
import type { HealthTable } from '../contracts/ipc.js';
import { UpstreamGuard } from '../shared/upstream-guard.js';
import { KeySets } from './key-sets/key-sets.js';
import { Discovery } from './discovery/discovery.js';
import { discoveryResolver } from './discovery/dns-query.js';
import { fetchKeySet } from './key-sets/key-set-fetch.js';
import { OidcSignIn } from '../admin/oidc/oidc-sign-in.js';
import { ConsoleSessions } from '../admin/oidc/console-sessions.js';

export type { Running } from './supervisor-lifecycle.js';

/**
 * `switchyard run`: load and check the config, bind the admin port, check the data
 * port, open the volume, fork the workers, and report ready. Throws BootError with
 * the exit code on any failure before ready.
 */
export async function startSupervisor(configFile: string): Promise<Running> {
  const loaded = loadGatewayConfig(configFile);
  if (!loaded.ok || !loaded.config) throw new BootError(EXIT.bootstrap, 'invalid configuration', loaded.errors);
  const config = loaded.config;
  // SIGHUP is logrotate's "reopen your files"; Node's default for it would end the gateway, even mid-boot.
  let onHangup = () => {};
  process.on('SIGHUP', () => onHangup());
  const log = createLogger(config.log.level, { role: 'supervisor' });
  for (const w of loaded.warnings) log.warn(w);
  const observe = observeSettings(config, loaded.baseDir);
  checkAccessLogFile(observe.accessLog?.path);
  // Before anything opens: a missing or bad step package stops the start (exit 10).
  const { registry: steps, settings: stepPackages } = await loadGatewaySteps(config.steps, loaded.baseDir).catch((err: Error) => {
    throw new BootError(EXIT.bootstrap, err.message);
  });
  if (stepPackages.dirs.length) log.info({ steps: steps.packageSteps().map((s) => `${s.code} ${s.origin!.package}@${s.origin!.version}`) }, 'step packages loaded');

  let volume: Volume;
  try {
    volume = await openVolume(config.volume, loaded.baseDir, log);
  } catch (err) {
    throw new BootError(EXIT.bootstrap, `cannot open volume ${shownVolume(config.volume)}: ${(err as Error).message}`);
  }

  const workers = config.workers ?? availableParallelism();
  const entities = new EntityRepo(volume.db);
  const generations = new GenerationRepo(volume.db, config.history.keep);
  const plugins = new PluginRepo(volume.db);
  // After a restart on a persistent volume the last published generation serves at once.
  const upstreams = upstreamRules(config);
  const keyEnv = config.secrets.keyEnv;
  const secretBox = keyEnv === undefined ? null : new SecretBox(parseSealingKey(process.env[keyEnv])!);
  installSecretBox(secretBox); // health probes open the keys of the certs clusters name
  const secrets = { env: config.secrets.env, reserved: reservedSecretEnv(config) };
  const publisher: Publisher = new Publisher(volume.db, entities, generations, plugins, (): WorkerPool => pool, log, secrets, upstreams);
  publisher.fleet = volume.fleet;
  publisher.redis = config.redis !== undefined;
  const quotas = new TenantQuotas(config.quotas, entities, volume.db);
  publisher.restoreCheck = (tenant, state) => quotas.checkRestore(tenant, state);
  publisher.steps = steps;
  try {
    await publisher.load();
  } catch (err) {
    await volume.close();
    throw new BootError(EXIT.bootstrap, `cannot read volume ${volume.shown}: ${(err as Error).message}`);
  }
  const fleet = volume.fleet ? new FleetFollower(volume.fleet, publisher, config.admin.listen, log) : null;
  // Health probes go through the same upstream policy as the workers' connections.
  const sendTable = () => pool.broadcast({ type: 'health', unhealthy: outOfRotation() });
  const upstreamGuard = UpstreamGuard.from(upstreams);
  const health = new HealthChecks(log, sendTable, upstreamGuard);
  // Key sets (jwt-auth jwksUri/issuer): fetched here once for the node, through the same upstream policy, and pushed to the workers.
  const keySets = new KeySets({
    fetch: (spec) => fetchKeySet(spec, upstreamGuard),
    pushAll: (msg) => pool.sendAll(msg),
    sendTo: (worker, msg) => pool.sendTo(worker, msg),
    log,
  });
  keySets.serve(publisher.current()?.payload.keySources ?? []);
  const outliers = new OutlierEjection(log, sendTable);
  const outOfRotation = (): HealthTable => mergeTables(health.table(), outliers.table());
  const dataMetrics = new DataMetricsTotals();
  // {dns} targets: resolved here once for the node; probes, ejections and the per-target series follow the addresses found.
  const discovery = new Discovery({ resolver: discoveryResolver(config.discovery.resolvers), guard: upstreamGuard, pushAll: (msg) => pool.sendAll(msg), expanded: (gen) => (outliers.update(gen), health.update(gen), gen && dataMetrics.keepOnly(servedKeys(gen))), log });
  const engine = dataPlaneEngine(config.listen, uwsSupport());
  if (config.listen.engine === 'auto' && engine.engine === 'node') log.info({ engine: engine.engine }, `data plane engine node (${engine.why})`);
  const pool: WorkerPool = new WorkerPool({
    count: workers,
    listen: { host: config.listen.host, port: config.listen.port },
    logLevel: config.log.level,
    graceMs: config.drain.graceMs,
    dataPlane: {
      paths: config.paths,
      trustedProxies: config.trustedProxies,
      upstreams,
      limits: config.limits,
      ...(config.listen.tls ? { tls: tlsListenerSettings(config.listen) } : {}),
      engine: engine.engine,
      tlsProtocols: engine.tlsProtocols,
      h2c: engine.h2c,
      ...(keyEnv === undefined ? {} : { sealingKeyEnv: keyEnv }),
      observe,
      ...(config.readiness.dataPath === undefined ? {} : { readyPath: config.readiness.dataPath }),
      ...(stepPackages.dirs.length ? { steps: stepPackages } : {}),
    },
    log,
    currentGeneration: () => publisher.current(),
    currentHealth: outOfRotation,
    currentKeySets: () => keySets.entries(),
    currentDiscovery: () => discovery.sets(),
  });
  onHangup = () => {
    log.info('SIGHUP: workers reopen the access log');
    // Draining and starting workers too: one that opened the file before the rename writes to it until told.
    pool.sendAll({ type: 'reopen-logs' });
  };
  publisher.tls = { openKey: (stored, context) => openStored(stored, context, secretBox), listening: config.listen.tls !== undefined, clientCertificates: config.listen.tls?.clientCertificates !== undefined };
  // The stored generation was stamped with the package builds of the node that published it:
  // workers start on the ones loaded now (a package upgraded since keeps its routes serving).
  if (stepPackages.dirs.length) await restampAtStart(publisher, steps, log);
  const storePing = volume.pinger(config.readiness.storeTimeoutMs);
  const readiness = new Readiness(() => pool.slots, () => publisher.currentId(), new StoreCheck(storePing, config.readiness.storeTimeoutMs, log));
  const readyPath = config.readiness.dataPath;
  // The store is asked every second whether or not the data port answers readiness, so /readyz
  // (which never waits on the store) reads a verdict at most a second old.
  const push = new ReadinessPush(readiness, pool);
  publisher.onServed = (gen) => {
    discovery.serve(gen.payload);
    keySets.serve(gen.payload.keySources ?? []);
    push.push(); // not ready until every worker acknowledged it
    if (readyPath !== undefined) for (const r of shadowedReadyPath(gen.payload, readyPath)) log.warn({ route: r, path: readyPath }, 'readiness.dataPath: the data port answers this path itself; the route never sees it');
  };
  pool.onWorkerMessage((_slot, msg) => {
    if (msg.type === 'outlier') outliers.report(msg.cluster, msg.target);
    else if (msg.type === 'metrics') dataMetrics.add(msg.delta);
  });
  pool.onWorkerMessage((_slot, msg, from) => {
    if (msg.type === 'key-refresh') keySets.refresh(msg.source, from);
  });
  const clusterLimits = config.redis
    ? new ClusterRateLimits(config.redis.url, config.redis.passwordEnv ? process.env[config.redis.passwordEnv] : undefined, config.redis.keyPrefix, () => pool.live().length, log)
    : null;
  serveLeases(pool, new RateLimitLeases(() => pool.live().length), clusterLimits, log);
  const workerGuards = new WorkerGuards(pool, log);
  // Before a restart replaces the workers, the packages are read again: the replacements start on the new builds.
  const workerRestart = new WorkerRestart(pool, workerGuards, log, { beforeRestart: () => reloadSteps(publisher, steps, log) });
  publisher.restarting = () => workerRestart.running();
  const keys = new KeyRepo(volume.db);
  const keyUsage = new KeyUsage(keys, (err) => log.error({ err }, 'recording key use failed'));
  const subKeys = new SubKeyRing(keys, keyUsage);
  const auditRepo = new AuditRepo(volume.db);
  const throttle = new AuthThrottle(config.admin.authFailures);
  const oidcSettings = config.admin.oidc;
  // The secret is read once here (checked set at load); it lives in this object only, never logged.
  const oidc = oidcSettings ? new OidcSignIn(oidcSettings, process.env[oidcSettings.clientSecretEnv]!, new ConsoleSessions(oidcSettings.maxSessions)) : null;
  const services: Services = {
    ...{ version: VERSION, startedAt: Date.now(), volume, pool, log, entities, generations, plugins, publisher, health, outliers, inFlight: new InFlightQuery(pool), secretBox, dataMetrics, steps },
    ...{ keys, keyUsage, subKeys, audit: auditRepo, throttle, quotas, workerLoad: new WorkerLoadQuery(pool), paths: config.paths, fleet, clusterLimits, readiness },
    ...{ workerRestart, workerGuards, keySets, oidc, discovery },
  };

  const systemKeys = new SystemKeyRing(config.admin.keys);
  const admin = createAdminServer({
    operations: OPERATIONS,
    handlers: HANDLERS,
    resolvers: [systemKeys, subKeys],
    ...(oidc ? { sessions: { resolver: oidc.sessions, secure: oidc.secure } } : {}),
    isSystemToken: (s) => systemKeys.resolve(s) !== null,
    services,
    log,
    throttle,
    audit: auditRepo,
    transaction: (fn, opts) => volume.db.transaction(fn, opts),
    maxConnectionsPerAddress: config.admin.maxConnectionsPerAddress,
    maxConnections: config.admin.maxConnections,
  });
  const adminAddr = parseHostPort(config.admin.listen)!;
  try {
    await listen(admin, adminAddr.host, adminAddr.port);
  } catch (err) {
    await volume.close();
    throw new BootError(EXIT.binding, `cannot bind admin port ${config.admin.listen}: ${(err as NodeJS.ErrnoException).code ?? err}`);
  }
  const fail = async (code: number, message: string): Promise<never> => {
    discovery.stop();
    await pool.stop(0).catch(() => {});
    await new Promise((r) => admin.close(r));
    await volume.close();
    throw new BootError(code, message);
  };
  const busy = await probePort(config.listen.host, config.listen.port);
  if (busy) return fail(EXIT.binding, `cannot bind data port ${busy}`);
  const tlsBusy = config.listen.tls ? await probePort(config.listen.tls.host ?? config.listen.host, config.listen.tls.port) : null;
  if (tlsBusy) return fail(EXIT.binding, `cannot bind TLS data port ${tlsBusy}`);
  // DNS targets resolved before the workers start (bounded): they listen with the addresses.
  discovery.serve(publisher.current()?.payload ?? null);
  await discovery.settled();
  try {
    await pool.start();
  } catch (err) {
    return fail(err instanceof BindError ? EXIT.binding : EXIT.bootstrap, (err as Error).message);
  }

  const readyLine =
    `switchyard ready data=http://${bracketed(config.listen.host)}:${config.listen.port} ` +
    `admin=http://${bracketed(adminAddr.host)}:${adminAddr.port} workers=${workers} generation=${publisher.currentId()}`;
  keyUsage.start();
  fleet?.start();
  push.start();
  // Expired sub-keys answer 401 at once; their records go a day later (key list shows them as expired until then).
  const purge = setInterval(() => {
    keys.purgeExpired(Date.now() - EXPIRED_KEY_RETENTION_MS).catch((err: unknown) => log.error({ err }, 'purging expired keys failed'));
  }, 60_000);
  purge.unref();
  const beforeClose = async () => {
    await fleet?.stop();
    push.stop();
    storePing.close();
    clusterLimits?.close();
    clearInterval(purge);
    health.stop();
    outliers.stop();
    keySets.stop();
    discovery.stop();
    await keyUsage.stop(); // the last second of key use reaches the volume
  };
  return lifecycle(config, log, admin, pool, volume, readyLine, beforeClose);
}

const EXPIRED_KEY_RETENTION_MS = 24 * 3600 * 1000;
