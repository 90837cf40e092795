// Shared by the server processes of the benchmark: stop by themselves when the
// parent (bench/run.mjs) goes away, even if it was killed with SIGKILL.
export function exitWithParent(close) {
  const stop = () => {
    try {
      close?.();
    } finally {
      process.exit(0);
    }
  };
  // The parent holds our stdin as a pipe: EOF means it is gone.
  process.stdin.on('end', stop);
  process.stdin.on('error', stop);
  process.stdin.resume();
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.on('disconnect', stop);
}
