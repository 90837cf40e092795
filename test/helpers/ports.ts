import { createServer, type Server } from 'node:net';

/**
 * Ports chosen at run time: the kernel picks a free one when we bind port 0. Several
 * ports are held open together before any is released, so one call never returns the
 * same port twice.
 */
export async function freePorts(count: number, host = '127.0.0.1'): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const srv = createServer();
      servers.push(srv);
      await new Promise<void>((resolve, reject) => {
        srv.once('error', reject);
        srv.listen({ host, port: 0, exclusive: true }, () => resolve());
      });
    }
    return servers.map((s) => (s.address() as { port: number }).port);
  } finally {
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  }
}

export async function freePort(host = '127.0.0.1'): Promise<number> {
  return (await freePorts(1, host))[0]!;
}

/** True when the port can be bound exclusively right now (nobody holds it, not even with SO_REUSEPORT). */
export function canBind(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen({ host, port, exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

/** Holds a port with a plain listening socket (another process's view: the port is taken). */
export async function occupyPort(port: number, host = '127.0.0.1'): Promise<{ close(): Promise<void> }> {
  const srv = createServer((sock) => sock.destroy());
  await new Promise<void>((resolve, reject) => {
    srv.once('error', reject);
    srv.listen({ host, port, exclusive: true }, () => resolve());
  });
  return { close: () => new Promise<void>((r) => srv.close(() => r())) };
}
