import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A service for the steps that call one (forward-auth, http-callout): answers every
 * request after `delayMs` with `status`, a JSON body and an `x-user-id` header. Closed
 * when the test ends. Returns its URL (`http://127.0.0.1:<port>/`).
 */
export async function startService(
  t: { after(fn: () => unknown): void },
  { delayMs = 0, status = 200, body = {}, userId = 'u-42' }: { delayMs?: number; status?: number; body?: unknown; userId?: string } = {},
): Promise<string> {
  const server: Server = createServer((_req, res) => {
    setTimeout(() => {
      res.writeHead(status, { 'content-type': 'application/json', 'x-user-id': userId });
      res.end(JSON.stringify(body));
    }, delayMs);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => new Promise((r) => server.close(r)));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}
