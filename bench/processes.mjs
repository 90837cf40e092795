// The processes run.mjs starts (servers, the gateway's guard, wrk) and its temporary
// folders: tracked here, all stopped and removed on the way out, on SIGINT/SIGTERM/SIGHUP
// too. The servers (and guard.mjs around the gateway) also exit when their stdin closes,
// so even a SIGKILL of run.mjs leaves nothing behind.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export class Processes {
  #children = new Set();
  #tmps = [];
  #onStop = [];
  /** A signal arrived: everything is already being stopped. */
  signalled = false;

  /** `pin`: run pinned children under `taskset -c <cpu>`; `cwd`: their working folder. */
  constructor({ pin, cwd }) {
    this.pin = pin;
    this.cwd = cwd;
    // Last resort (synchronous, e.g. after an uncaught exception): SIGTERM, so that
    // guard.mjs still stops the gateway.
    process.on('exit', () => {
      for (const c of this.#children) c.kill('SIGTERM');
      for (const t of this.#tmps) rmSync(t, { recursive: true, force: true });
    });
    for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
      process.once(sig, () => {
        this.signalled = true;
        process.stderr.write(`\nbench: ${sig}, stopping everything\n`);
        this.stopAll().finally(() => process.exit(130));
      });
    }
  }

  /** The command line, under `taskset -c <cpu>` when pinning is on. */
  pinned(cpu, cmd, args) {
    return this.pin && cpu !== undefined ? ['taskset', ['-c', cpu, cmd, ...args]] : [cmd, args];
  }

  /** Spawns `cmd` (pinned to `cpu`) and tracks it until it exits. */
  spawn(cpu, cmd, args, options) {
    const child = spawn(...this.pinned(cpu, cmd, args), options);
    this.#children.add(child);
    child.once('exit', () => this.#children.delete(child));
    return child;
  }

  /** A temporary folder, removed when everything stops. */
  tmp(prefix) {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    this.#tmps.push(dir);
    return dir;
  }

  /**
   * Starts `node <args>` and resolves with { child, match } once its stdout matches
   * `ready` (our servers print `ready port=N`); rejects with its stderr's tail if it
   * exits first or is not ready in time.
   */
  startNode(name, args, { env, cpu, ready = /^ready port=(\d+)$/m, timeoutMs = 20_000 } = {}) {
    const child = this.spawn(cpu, process.execPath, args, {
      cwd: this.cwd,
      env: { ...process.env, ...env },
      stdio: ['pipe', 'pipe', 'pipe'], // stdin stays open: closing it is the "parent gone" signal
    });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d) => {
      stderr = (stderr + d).slice(-4000);
    });
    return new Promise((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => fail(new Error(`${name}: not ready after ${timeoutMs} ms`)), timeoutMs);
      const fail = (err) => {
        clearTimeout(timer);
        reject(new Error(`${err.message}\n--- ${name} stderr ---\n${stderr}`));
      };
      child.stdout.setEncoding('utf8');
      const watch = (d) => {
        out += d;
        const m = ready.exec(out);
        if (m) {
          clearTimeout(timer);
          // From now on its output is read and dropped: kept, `out` would grow and be rescanned
          // on every chunk of a child that logs a lot, and unread, a full pipe would block it.
          child.stdout.off('data', watch);
          child.stdout.resume();
          resolve({ child, match: m });
        }
      };
      child.stdout.on('data', watch);
      child.once('error', fail);
      child.once('exit', (code, signal) => fail(new Error(`${name}: exited early (code ${code}, signal ${signal})`)));
    });
  }

  /** SIGTERM to `child` (SIGKILL after 15 s); resolves once it exited. */
  stop(child) {
    return new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const hard = setTimeout(() => child.kill('SIGKILL'), 15_000);
      child.once('exit', () => {
        clearTimeout(hard);
        resolve();
      });
      child.kill('SIGTERM');
    });
  }

  /** SIGTERM to every child (SIGKILL after 15 s), then the temporary folders go. */
  async stopAll() {
    await Promise.all([...this.#children].map((c) => this.stop(c)));
    for (const t of this.#tmps.splice(0)) rmSync(t, { recursive: true, force: true });
    for (const fn of this.#onStop.splice(0)) fn();
  }

  /** Runs `fn` once every child has stopped (what they leave outside a temporary folder: a database schema). */
  onStop(fn) {
    this.#onStop.push(fn);
  }
}
