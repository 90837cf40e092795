#!/usr/bin/env node
// `npm start`: runs the gateway on config/worker.example.json. No secret ships with the
// project: when SWITCHYARD_ROOT_TOKEN is unset, a random token is made for this run
// and shown once, on stderr, so the ready line stays alone on stdout.
import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const env = { ...process.env };
if (!env.SWITCHYARD_ROOT_TOKEN) {
  env.SWITCHYARD_ROOT_TOKEN = randomBytes(24).toString('base64url');
  process.stderr.write(
    `\nSWITCHYARD_ROOT_TOKEN was not set; this run's root token (shown once):\n\n` +
      `  export SWITCHYARD_ADMIN=http://127.0.0.1:9180 SWITCHYARD_TOKEN=${env.SWITCHYARD_ROOT_TOKEN}\n\n` +
      `Set SWITCHYARD_ROOT_TOKEN yourself to keep a token across restarts.\n\n`,
  );
}
const child = spawn(process.execPath, [`${root}bin/run.js`, 'run', '--config', `${root}config/worker.example.json`], {
  env,
  stdio: 'inherit',
});
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
