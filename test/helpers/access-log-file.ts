import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Gateway } from './gateway.js';
import { waitFor } from './wait.js';
import type { Json } from './json.js';

/** The worker access log's lines (worker.json `observability.accessLog.path` "access.log" in the gateway's folder), [] while there is none. */
export function accessLogLines<T = Record<string, Json>>(gw: Gateway): T[] {
  const file = join(gw.dir, 'access.log');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as T);
}

/** The access log's line of the one request to `path`. */
export function accessLogLine(gw: Gateway, path: string, timeoutMs = 10_000): Promise<{ path: string; status: number }> {
  return waitFor(`the access log line of ${path}`, () => accessLogLines<{ path: string; status: number }>(gw).find((l) => l.path === path), { timeoutMs });
}
