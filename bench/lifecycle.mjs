// Shared by the benchmark's child processes: notice that the parent (bench/run.mjs) went
// away, even if it was killed with SIGKILL, or that we were asked to stop.

/**
 * Calls `stop` when stdin closes (the parent holds it as a pipe: EOF means it is gone) or
 * on SIGTERM/SIGINT. `stop` may be called more than once.
 */
export function onParentGone(stop) {
  process.stdin.on('end', stop);
  process.stdin.on('error', stop);
  process.stdin.resume();
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

/** The servers' rule: on the parent's exit (or an IPC disconnect), `close` and exit. */
export function exitWithParent(close) {
  const stop = () => {
    try {
      close?.();
    } finally {
      process.exit(0);
    }
  };
  onParentGone(stop);
  process.on('disconnect', stop);
}
