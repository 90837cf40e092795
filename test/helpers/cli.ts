import { spawn } from 'node:child_process';
import { childEnv, ROOT, RUN_JS } from './gateway.js';
import type { Json } from './json.js';

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON, or undefined when it is not JSON. */
  json: Json;
}

/**
 * Runs `node bin/run.js <args>` to completion (killed after timeoutMs) and captures its
 * output. The environment is ours minus SWITCHYARD_* plus `env` (undefined removes).
 */
export function runCli(
  args: string[],
  { env = {}, timeoutMs = 20_000, input }: { env?: Record<string, string | undefined>; timeoutMs?: number; input?: string } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [RUN_JS, ...args], { cwd: ROOT, env: childEnv(env), stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    if (input !== undefined) {
      proc.stdin!.on('error', () => {}); // the command may exit before reading all of it
      proc.stdin!.end(input);
    }
    let stdout = '';
    let stderr = '';
    proc.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    proc.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`switchyard ${args.join(' ')}: no exit within ${timeoutMs} ms; stdout: ${stdout} stderr: ${stderr}`));
    }, timeoutMs);
    proc.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    proc.on('close', (code, signal) => {
      clearTimeout(timer);
      let json: unknown;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      resolve({ code, signal, stdout, stderr, json });
    });
  });
}

const shellQuote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

/**
 * Runs `node bin/run.js <args>` under a pseudo-terminal (util-linux `script`), as a person at
 * a terminal would: stdout and stdin are a TTY. Output comes back with "\r\n" made "\n".
 * `answer`: typed (with Enter) once the output matches `when`; without it stdin is at its end.
 */
export function runTty(
  args: string[],
  { env = {}, timeoutMs = 20_000, answer }: { env?: Record<string, string | undefined>; timeoutMs?: number; answer?: { when: RegExp; type: string } } = {},
): Promise<CliResult> {
  const command = [process.execPath, RUN_JS, ...args].map(shellQuote).join(' ');
  return new Promise((resolve, reject) => {
    const proc = spawn('script', ['-qec', command, '/dev/null'], { cwd: ROOT, env: childEnv({ TERM: 'dumb', COLUMNS: '200', ...env }), stdio: [answer ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
    let out = '';
    let typed = false;
    proc.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (answer && !typed && answer.when.test(out)) {
        typed = true;
        proc.stdin!.write(`${answer.type}\r`);
      }
    });
    proc.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`script ${command}: no exit within ${timeoutMs} ms; output: ${out}`));
    }, timeoutMs);
    proc.on('close', (code, signal) => {
      clearTimeout(timer);
      const text = out.replaceAll('\r\n', '\n');
      // A terminal has one stream: stdout and stderr arrive interleaved in `stdout`.
      resolve({ code, signal, stdout: text, stderr: '', json: undefined });
    });
  });
}
