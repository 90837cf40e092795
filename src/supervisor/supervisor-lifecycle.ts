import type { Server } from 'node:http';
import type { GatewayConfig } from '../shared/gateway-config-schema.js';
import type { Logger } from '../shared/logger.js';
import type { Volume } from '../store/volume.js';
import { EXIT } from './boot-error.js';
import type { WorkerPool } from './worker-pool.js';

export interface Running {
  readyLine: string;
  /** Resolves with the process exit code once the supervisor has stopped. */
  stopped: Promise<number>;
  stop(): Promise<number>;
}

/** The running node's stop: on SIGTERM/SIGINT (or `stop()`), the admin port closes, the workers drain, then the store. */
export function lifecycle(config: GatewayConfig, log: Logger, admin: Server, pool: WorkerPool, volume: Volume, readyLine: string, beforeClose: () => Promise<void>): Running {
  let resolveStopped!: (code: number) => void;
  const stopped = new Promise<number>((r) => (resolveStopped = r));
  let stopping: Promise<number> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      log.info({ graceMs: config.drain.graceMs }, 'draining');
      admin.close();
      admin.closeIdleConnections();
      await pool.stop(config.drain.graceMs);
      await beforeClose();
      await volume.close();
      log.info('stopped');
      resolveStopped(EXIT.ok);
      return EXIT.ok;
    })());
  // Every signal, not once: a second SIGTERM/SIGINT during the drain must not fall to
  // Node's default handler (death by signal, in-flight requests cut).
  const onSignal = (sig: string) => {
    if (stopping) log.info({ signal: sig }, 'already draining');
    void stop();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  return { readyLine, stopped, stop };
}

/** Listens exclusively on host:port (a port taken by another process rejects). */
export function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port, exclusive: true }, () => {
      server.off('error', reject);
      resolve();
    });
  });
}
