// Runs a command that does not watch its parent (the gateway) and stops it when this
// process's stdin closes, i.e. when bench/run.mjs is gone, even after a SIGKILL; also on
// SIGTERM/SIGINT. Stop = SIGTERM, then SIGKILL after 10 s. Exits with the command's code.
//
//   node bench/guard.mjs <command> [args...]
import { spawn } from 'node:child_process';
import { onParentGone } from './lifecycle.mjs';

const [cmd, ...args] = process.argv.slice(2);
if (!cmd) {
  process.stderr.write('usage: node bench/guard.mjs <command> [args...]\n');
  process.exit(2);
}
// stdout/stderr are the guard's own: the command's ready line reaches the parent directly.
const child = spawn(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'] });
child.once('error', (err) => {
  process.stderr.write(`guard: cannot start ${cmd}: ${err.message}\n`);
  process.exit(1);
});
child.once('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));

let stopping = false;
function stop() {
  if (stopping) return;
  stopping = true;
  child.kill('SIGTERM');
  setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
}
onParentGone(stop);
