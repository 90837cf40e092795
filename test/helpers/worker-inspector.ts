import WebSocket from 'ws';
import type { Gateway } from './gateway.js';
import { waitFor } from './wait.js';

/**
 * A worker's V8 inspector, reached the way a person debugging a worker would: the gateway
 * started with SWITCHYARD_WORKER_NODE_ARGS="--inspect=127.0.0.1:0" prints each worker's
 * debugger address on stderr. `evaluate` runs an expression on the worker's main thread.
 */
export interface WorkerInspector {
  pid: number;
  /** Sends the expression and does not wait for it (one that blocks the loop answers late or never). */
  fire(expression: string): void;
  close(): void;
}

export const INSPECT_ARGS = { SWITCHYARD_WORKER_NODE_ARGS: '--inspect=127.0.0.1:0' };

/** The inspector of the worker process `pid` (each debugger address printed so far is asked its pid). */
export async function inspectWorker(gw: Gateway, pid: number): Promise<WorkerInspector> {
  return waitFor(
    `the inspector of worker ${pid}`,
    async () => {
      for (const url of gw.stderr().match(/ws:\/\/127\.0\.0\.1:\d+\/[\w-]+/g) ?? []) {
        const ws = await open(url).catch(() => null);
        if (ws === null) continue;
        let id = 0;
        const call = (expression: string) =>
          new Promise<unknown>((resolve) => {
            const mine = ++id;
            ws.on('message', (d: Buffer) => {
              const m = JSON.parse(d.toString()) as { id?: number; result?: { result?: { value?: unknown } } };
              if (m.id === mine) resolve(m.result?.result?.value);
            });
            ws.send(JSON.stringify({ id: mine, method: 'Runtime.evaluate', params: { expression } }));
          });
        if ((await call('process.pid')) === pid) {
          return { pid, fire: (expression: string) => ws.send(JSON.stringify({ id: ++id, method: 'Runtime.evaluate', params: { expression } })), close: () => ws.terminate() };
        }
        ws.terminate();
      }
      return undefined;
    },
    { timeoutMs: 10_000, intervalMs: 200 },
  );
}

function open(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}
