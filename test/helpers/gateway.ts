import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestContext } from 'node:test';
import { freePorts } from './ports.js';
import type { Json } from './json.js';

/** Repository root and the CLI entry the tests run (the built dist/, as a user would). */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const RUN_JS = join(ROOT, 'bin', 'run.js');

export const READY_LINE =
  /^switchyard ready data=(http:\/\/\S+) admin=(http:\/\/\S+) workers=(\d+) generation=(\d+)$/;

/**
 * A random 40-character bearer token, fresh for every key of every test. Never led by `-`:
 * the CLI tests pass it as `--token <value>`, and a value led by `-` reads as a flag (one
 * token in 64 made `cli-keys-audit` fail with "Flag --token expects a value").
 */
export function newToken(): string {
  const token = randomBytes(30).toString('base64url');
  return token.startsWith('-') ? `t${token.slice(1)}` : token;
}

// ---------------------------------------------------------------------------------
// Process hygiene: every gateway is spawned as its own process group, remembered
// here, and SIGKILLed (group-wide, so its workers too) by t.after or, at the latest,
// when the test process exits, whatever the outcome of the test.

const liveGroups = new Set<number>();

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

process.on('exit', () => {
  for (const pid of liveGroups) killGroup(pid);
});
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(sig, () => {
    for (const pid of liveGroups) killGroup(pid);
    process.exit(128 + ({ SIGINT: 2, SIGTERM: 15, SIGHUP: 1 } as const)[sig]);
  });
}

/** The environment for a child: ours, minus anything that would steer the CLI or the test runner. */
export function childEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith('SWITCHYARD_') || k.startsWith('NODE_TEST') || k === 'NODE_OPTIONS') continue;
    env[k] = v;
  }
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

/** A fresh temporary folder, removed after the test (when `t` is given). */
export function tempDir(t?: TestContext, prefix = 'switchyard-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t?.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export function writeJson(file: string, value: unknown): string {
  writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value, null, 2));
  return file;
}

// ---------------------------------------------------------------------------------
// Admin keys and worker.json

export interface KeySpec {
  id: string;
  scopes: string[];
  tenant?: string;
  /** Default: a fresh newToken(). */
  token?: string;
  /** How the key appears in worker.json; default tokenEnv (no plaintext in the file). */
  source?: 'token' | 'tokenEnv' | 'tokenSha256';
}

export interface BuiltConfig {
  config: Record<string, Json>;
  /** key id -> bearer token */
  tokens: Record<string, string>;
  /** Environment variables the config's tokenEnv keys read. */
  env: Record<string, string>;
}

export interface ConfigOptions {
  dataPort: number;
  adminPort: number;
  host?: string;
  keys?: KeySpec[];
  workers?: number;
  volume?: string;
  drainGraceMs?: number;
  logLevel?: string;
  /** worker.json `listen.engine`; absent: the default (`auto`). */
  engine?: 'auto' | 'uws' | 'node';
}

export function buildConfig(o: ConfigOptions): BuiltConfig {
  // SWITCHYARD_TEST_ENGINE runs a test file's gateways on one engine (`node`, `uws`) where the test does not choose.
  const engine = o.engine ?? (process.env.SWITCHYARD_TEST_ENGINE as ConfigOptions['engine']);
  const tokens: Record<string, string> = {};
  const env: Record<string, string> = {};
  const keys = (o.keys ?? []).map((k, i) => {
    const token = k.token ?? newToken();
    tokens[k.id] = token;
    const out: Record<string, unknown> = { id: k.id, scopes: k.scopes };
    const source = k.source ?? 'tokenEnv';
    if (source === 'token') out.token = token;
    else if (source === 'tokenSha256') out.tokenSha256 = createHash('sha256').update(token).digest('hex');
    else {
      const name = `SY_TEST_TOKEN_${i}`;
      env[name] = token;
      out.tokenEnv = name;
    }
    if (k.tenant !== undefined) out.tenant = k.tenant;
    return out;
  });
  const config: Record<string, Json> = {
    volume: o.volume ?? 'memory:',
    listen: { port: o.dataPort, host: o.host ?? '127.0.0.1', ...(engine ? { engine } : {}) },
    admin: { listen: `${o.host ?? '127.0.0.1'}:${o.adminPort}`, keys },
    workers: o.workers ?? 1,
    log: { level: o.logLevel ?? 'info' },
  };
  if (o.drainGraceMs !== undefined) config.drain = { graceMs: o.drainGraceMs };
  return { config, tokens, env };
}

// ---------------------------------------------------------------------------------
// Running `switchyard run`

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface RunProcess {
  proc: ChildProcess;
  pid: number;
  stdout(): string;
  stderr(): string;
  /** stderr parsed as JSON lines (lines that are not JSON are skipped). */
  logLines(): Json[];
  /** Resolves when the process has exited. */
  exited: Promise<Exit>;
  /** Exit status once known, else null. */
  exit(): Exit | null;
  /** Resolves with the ready line, rejects if the process exits first or the timeout passes. */
  ready(timeoutMs?: number): Promise<string>;
  /** SIGKILL to the whole process group (supervisor and workers). */
  kill(): void;
}

/**
 * Spawns `node bin/run.js <args>` as its own process group and tracks it for cleanup.
 * Use for runs expected to fail; startGateway for the usual case.
 */
export function spawnRun(t: TestContext | undefined, args: string[], env: NodeJS.ProcessEnv = childEnv()): RunProcess {
  const proc = spawn(process.execPath, [RUN_JS, ...args], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const pid = proc.pid!;
  liveGroups.add(pid);
  let out = '';
  let err = '';
  let exit: Exit | null = null;
  proc.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  proc.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<Exit>((resolve) => {
    proc.once('close', (code, signal) => {
      exit = { code, signal };
      resolve(exit);
    });
  });
  const kill = () => {
    killGroup(pid);
  };
  // The group is forgotten only once it is known dead: the supervisor may be gone
  // while an orphaned worker still runs in its group.
  t?.after(async () => {
    kill();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([exited, new Promise((r) => (timer = setTimeout(r, 5_000)))]);
    clearTimeout(timer); // a pending timer would keep the test file alive for 5 s
    liveGroups.delete(pid);
  });

  const ready = (timeoutMs = 20_000) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const line = out.split('\n').find((l) => l.startsWith('switchyard ready'));
        if (line !== undefined) {
          done();
          resolve(line);
          return true;
        }
        return false;
      };
      const onData = () => void check();
      const onExit = (e: Exit) => {
        if (check()) return;
        done();
        reject(new Error(`switchyard exited (code ${e.code}, signal ${e.signal}) before ready; stderr:\n${err.slice(-4000)}`));
      };
      const timer = setTimeout(() => {
        if (check()) return;
        done();
        kill();
        reject(new Error(`no ready line within ${timeoutMs} ms; stdout: ${out}\nstderr:\n${err.slice(-4000)}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        proc.stdout!.off('data', onData);
      };
      proc.stdout!.on('data', onData);
      void exited.then(onExit);
      check();
    });

  return {
    proc,
    pid,
    stdout: () => out,
    stderr: () => err,
    logLines: () => parseLogLines(err),
    exited,
    exit: () => exit,
    ready,
    kill,
  };
}

export function parseLogLines(text: string): Json[] {
  const lines: Json[] = [];
  for (const l of text.split('\n')) {
    if (!l.trim()) continue;
    try {
      lines.push(JSON.parse(l));
    } catch {
      // not a log line
    }
  }
  return lines;
}

/** Waits for the process to exit, SIGKILLing its group after `timeoutMs`. */
export async function exitWithin(p: RunProcess, timeoutMs: number): Promise<Exit & { timedOut: boolean }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), timeoutMs)));
  const r = await Promise.race([p.exited, timeout]);
  clearTimeout(timer);
  if (r === 'timeout') {
    p.kill();
    return { ...(await p.exited), timedOut: true };
  }
  return { ...r, timedOut: false };
}

export interface GatewayOptions extends Partial<Omit<ConfigOptions, 'dataPort' | 'adminPort'>> {
  /** Folder for worker.json (and virtual:// volumes); default a fresh temp dir removed after the test. */
  dir?: string;
  /** Use these ports instead of fresh ones (e.g. a restart on the same config). */
  dataPort?: number;
  adminPort?: number;
  /** Last word on the config object before it is written. */
  edit?: (config: Record<string, Json>) => void;
  /** Extra environment for the child. */
  env?: Record<string, string | undefined>;
  readyTimeoutMs?: number;
  /** Called once the process is spawned, before its ready line: a test may watch the boot. */
  onSpawn?: (p: RunProcess, ports: { dataPort: number; adminPort: number }) => void;
}

export interface Gateway extends RunProcess {
  dir: string;
  configFile: string;
  config: Record<string, Json>;
  readyLine: string;
  dataUrl: string;
  adminUrl: string;
  dataPort: number;
  adminPort: number;
  workers: number;
  /** key id -> bearer token */
  tokens: Record<string, string>;
  /** The child's environment (holds the tokenEnv values). */
  env: NodeJS.ProcessEnv;
  /** Sends `signal` (default SIGTERM) to the supervisor only; resolves with its exit and how long it took. */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<Exit & { ms: number; timedOut: boolean }>;
}

/**
 * Writes a worker.json into a fresh temp dir (ports chosen now, keys with fresh tokens),
 * starts `switchyard run --config`, and resolves once the ready line is printed. The
 * gateway is killed after the test whatever happens.
 */
export async function startGateway(t: TestContext, opts: GatewayOptions = {}): Promise<Gateway> {
  const dir = opts.dir ?? tempDir(t);
  const [dataPort, adminPort] =
    opts.dataPort !== undefined && opts.adminPort !== undefined ? [opts.dataPort, opts.adminPort] : await freePorts(2);
  const built = buildConfig({ ...opts, dataPort: dataPort!, adminPort: adminPort! });
  opts.edit?.(built.config);
  const configFile = writeJson(join(dir, 'worker.json'), built.config);
  const env = childEnv({ ...built.env, ...opts.env });
  const p = spawnRun(t, ['run', '--config', configFile], env);
  opts.onSpawn?.(p, { dataPort: dataPort!, adminPort: adminPort! });
  const readyLine = await p.ready(opts.readyTimeoutMs);
  const m = READY_LINE.exec(readyLine);
  if (!m) throw new Error(`malformed ready line: ${readyLine}`);
  const stop = async (signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 15_000) => {
    const t0 = Date.now();
    try {
      process.kill(p.pid, signal);
    } catch {
      // already gone
    }
    const r = await exitWithin(p, timeoutMs);
    return { ...r, ms: Date.now() - t0 };
  };
  return {
    ...p,
    dir,
    configFile,
    config: built.config,
    readyLine,
    dataUrl: m[1]!,
    adminUrl: m[2]!,
    dataPort: dataPort!,
    adminPort: adminPort!,
    workers: Number(m[3]),
    tokens: built.tokens,
    env,
    stop,
  };
}
