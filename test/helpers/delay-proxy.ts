import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TestContext } from 'node:test';

const CHILD = fileURLToPath(new URL('./delay-proxy-child.mjs', import.meta.url));

export interface DelayProxy {
  port: number;
  pid: number;
  /** Connections the proxy accepted so far. */
  connections(): Promise<number>;
}

/**
 * A TCP proxy on 127.0.0.1 in front of `host:port` that holds every chunk `delayMs` in each
 * direction, order kept: a database (or any server) behind added latency. It runs in a child
 * process of its own (delay-proxy-child.mjs), so the test's load does not add to the delay;
 * killed (by its PID) after the test.
 */
export async function startDelayProxy(t: TestContext, host: string, port: number, delayMs: number): Promise<DelayProxy> {
  const child = spawn(process.execPath, [CHILD, host, String(port), String(delayMs)], { stdio: ['pipe', 'pipe', 'inherit'] });
  t.after(() => {
    child.stdin.end();
    child.kill('SIGKILL');
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  const line = (re: RegExp, timeoutMs = 5_000) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const timer = setTimeout(() => done(new Error(`delay proxy: no ${re} within ${timeoutMs} ms (output: ${out})`)), timeoutMs);
      const check = () => {
        const m = re.exec(out);
        if (m) {
          out = out.slice(m.index + m[0].length);
          done(null, m);
        }
      };
      const done = (err: Error | null, m?: RegExpExecArray) => {
        clearTimeout(timer);
        child.stdout.off('data', check);
        if (err) reject(err);
        else resolve(m!);
      };
      child.stdout.on('data', check);
      check();
    });
  const listening = await line(/port (\d+)\n/);
  return {
    port: Number(listening[1]),
    pid: child.pid!,
    connections: async () => {
      child.stdin.write('count\n');
      return Number((await line(/conns (\d+)\n/))[1]);
    },
  };
}
