import { spawn } from 'node:child_process';
import { childEnv, ROOT, RUN_JS } from './gateway.js';
import type { CliResult } from './cli.js';

/**
 * Like runCli, but writes `input` to the command's stdin (then closes it), for
 * commands that read their document from stdin.
 */
export function runCliWithInput(
  args: string[],
  input: string,
  { env = {}, timeoutMs = 20_000 }: { env?: Record<string, string | undefined>; timeoutMs?: number } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [RUN_JS, ...args], { cwd: ROOT, env: childEnv(env), stdio: ['pipe', 'pipe', 'pipe'] });
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
    proc.stdin.on('error', () => {}); // the command may exit before reading all of it
    proc.stdin.end(input);
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
