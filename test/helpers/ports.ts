import { connect, createServer, type Server, type Socket } from 'node:net';
import { Worker } from 'node:worker_threads';

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

/**
 * A port that never completes a TCP handshake: a listening socket (backlog 1) in a thread
 * whose event loop is blocked, so it never accepts, with its accept queue filled by two
 * connections of ours. Linux drops further SYNs: a connect to it hangs until the caller's
 * connect timeout. Released after the test.
 */
export async function silentPort(t: { after(fn: () => unknown): void }): Promise<number> {
  const stop = new Int32Array(new SharedArrayBuffer(4));
  const thread = new Worker(
    `const { workerData: stop, parentPort } = require('node:worker_threads');
     const server = require('node:net').createServer();
     server.listen({ host: '127.0.0.1', port: 0, backlog: 1 }, () => {
       parentPort.postMessage(server.address().port);
       while (Atomics.load(stop, 0) === 0) Atomics.wait(stop, 0, 0, 200);
       server.close();
     });`,
    { eval: true, workerData: stop },
  );
  const port = await new Promise<number>((resolve, reject) => thread.once('message', resolve).once('error', reject));
  const fillers: Socket[] = [];
  t.after(async () => {
    for (const s of fillers) s.destroy();
    Atomics.store(stop, 0, 1);
    Atomics.notify(stop, 0);
    await thread.terminate();
  });
  for (let i = 0; i < 2; i++) {
    const s = connect(port, '127.0.0.1').on('error', () => {});
    fillers.push(s);
    await new Promise((r) => s.once('connect', r));
  }
  return port;
}
