#!/usr/bin/env node
// `npm start`: runs the gateway on config/worker.example.json, or on the `--config` given
// after `--` (other flags of `switchyard run` pass through too). No secret ships with the
// project: for the example config, when SWITCHYARD_ROOT_TOKEN is unset, a random token is made
// for this run and shown once, on stderr, so the ready line stays alone on stdout.
// npm runs this through `sh -c "exec node scripts/start.js"`: the shell gives way to this
// process, so the SIGTERM npm forwards lands here, and is passed on to the supervisor.
import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const env = { ...process.env };
const ownConfig = args.some((a) => a === '--config' || a.startsWith('--config='));
if (!ownConfig && !env.SWITCHYARD_ROOT_TOKEN) {
  env.SWITCHYARD_ROOT_TOKEN = randomBytes(24).toString('base64url');
  process.stderr.write(
    `\nSWITCHYARD_ROOT_TOKEN was not set; this run's root token (shown once):\n\n` +
      `  export SWITCHYARD_ADMIN=http://127.0.0.1:9180 SWITCHYARD_TOKEN=${env.SWITCHYARD_ROOT_TOKEN}\n\n` +
      `Set SWITCHYARD_ROOT_TOKEN yourself to keep a token across restarts.\n\n`,
  );
}
const config = ownConfig ? [] : ['--config', `${root}config/worker.example.json`];
const child = spawn(process.execPath, [`${root}bin/run.js`, 'run', ...config, ...args], { env, stdio: 'inherit' });
// Forwarded, so a signal to this process alone (a process manager, `kill`) drains the gateway
// too; on Ctrl-C the supervisor also gets the terminal's own SIGINT, and takes both as one.
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
