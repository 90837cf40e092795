// Loaded into a gateway with NODE_OPTIONS=--import: the supervisor (the cluster primary's main
// thread, not its workers or threads) writes a stderr line {loopLag, at} whenever its event loop
// ran a 10 ms timer more than 15 ms late, i.e. was blocked that long. Test-only.
import cluster from 'node:cluster';
import { isMainThread } from 'node:worker_threads';

if (cluster.isPrimary && isMainThread) {
  const TICK = 10;
  let last = performance.now();
  setInterval(() => {
    const now = performance.now();
    const lag = now - last - TICK;
    if (lag > 15) process.stderr.write(`${JSON.stringify({ loopLag: Math.round(lag), at: Date.now() })}\n`);
    last = now;
  }, TICK).unref();
}
