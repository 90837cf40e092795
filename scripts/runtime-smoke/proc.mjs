// Processes and ports for the runtime smoke: every command has a deadline, runs in a process
// group of its own (a timeout also stops what it started: node-gyp's make), and only what
// this script started is ever stopped.
import { spawn } from 'node:child_process';
import { createServer as createNetServer } from 'node:net';

/** Runs a command to its end within `timeoutMs`; rejects with its output on a non-zero exit. */
export function sh(cmd, args, { cwd, env = process.env, input, timeoutMs = 60_000 } = {}) {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { cwd, env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    let out = '';
    let err = '';
    p.stdout.setEncoding('utf8').on('data', (d) => (out += d));
    p.stderr.setEncoding('utf8').on('data', (d) => (err += d));
    const timer = setTimeout(() => process.kill(-p.pid, 'SIGKILL'), timeoutMs);
    p.on('error', reject);
    p.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve({ out, err });
      else reject(new Error(`${cmd} ${args.join(' ')}: exit ${code ?? signal}${signal === 'SIGKILL' ? ` (past ${timeoutMs} ms)` : ''}\n${out.slice(-3000)}\n${err.slice(-3000)}`));
    });
    p.stdin.end(input);
  });
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createNetServer().once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** `promise`, or a rejection naming `what` after `ms`. */
export function within(ms, what, promise) {
  let timer;
  const late = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
