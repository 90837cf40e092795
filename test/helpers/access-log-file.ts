import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Gateway } from './gateway.js';
import { waitFor } from './wait.js';

/** The worker access log's line (worker.json `observability.accessLog.path` "access.log" in the gateway's folder) of the one request to `path`. */
export function accessLogLine(gw: Gateway, path: string, timeoutMs = 10_000): Promise<{ path: string; status: number }> {
  const file = join(gw.dir, 'access.log');
  return waitFor(
    `the access log line of ${path}`,
    () => {
      if (!existsSync(file)) return undefined;
      return readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as { path: string; status: number })
        .find((l) => l.path === path);
    },
    { timeoutMs },
  );
}
