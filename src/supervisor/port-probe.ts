import { createServer } from 'node:net';

/**
 * Checks that a TCP port can be bound, by binding it exclusively for a moment. Workers
 * bind with SO_REUSEPORT, which would happily share a port with another SO_REUSEPORT
 * process; this probe does not set it, so any holder makes it fail.
 */
export function probePort(host: string, port: number): Promise<string | null> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', (err: NodeJS.ErrnoException) => resolve(`${host}:${port}: ${err.code ?? err.message}`));
    srv.listen({ host, port, exclusive: true }, () => srv.close(() => resolve(null)));
  });
}
