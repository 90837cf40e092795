import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';

export interface HeldUpstream {
  /** `127.0.0.1:<port>`, ready for a cluster's targets. */
  target: string;
  /** Requests received and not yet answered. */
  held(): number;
  /** Answers every request held now (200 `released`); later ones are held again. */
  release(): void;
}

/**
 * An in-process upstream that holds every answer until the test releases it, so requests
 * stay in flight in the gateway exactly as long as the test needs. Whatever is still held
 * is answered, and the server closed, when the test ends.
 */
export async function startHeldUpstream(t: TestContext): Promise<HeldUpstream> {
  const waiting: ServerResponse[] = [];
  const server = createServer((req, res) => {
    req.resume();
    waiting.push(res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const release = () => {
    for (const res of waiting.splice(0)) res.writeHead(200, { 'content-type': 'text/plain' }).end('released');
  };
  t.after(() => {
    release();
    server.closeAllConnections();
    return new Promise<void>((r) => server.close(() => r()));
  });
  return { target: `127.0.0.1:${(server.address() as AddressInfo).port}`, held: () => waiting.length, release };
}
