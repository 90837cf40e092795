// What an idle keep-alive connection costs a worker, and the per-worker connection cap:
// a real gateway (1 worker, limits.maxConnections 5,000, a directResponse route) gets
// 5,000 keep-alive connections from this process, each served once and then left idle;
// the worker's RSS (/proc/<pid>/status VmRSS) before and after gives the growth per
// connection (target < 4 KiB; reported, not asserted). Then the 5,001st connection must be
// refused (503 Svc.Data.TooManyConnections, closed) and 20 of the open ones must still be
// answered: the exit code is non-zero only when one of those two checks fails.
//
//   npm run bench:idle          (builds dist/ first; or: node bench/idle-connections.mjs)
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Processes } from './processes.mjs';
import { KeepAlive } from './keep-alive.mjs';
import { startIdleGateway } from './idle-gateway.mjs';
import { fmt, median, table } from './table.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, '..');
const HOST = '127.0.0.1';
const CONNECTIONS = 5_000;
const CHECKED = 20;
/** Short, so the guard's per-connection deadline state is gone before the steady reading. */
const HEADER_TIMEOUT_MS = 3_000;
const BATCH = 250;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const procs = new Processes({ pin: false, cwd: ROOT });
const sockets = [];
// The whole run is bounded: whatever hangs, everything is stopped within a minute.
const overall = setTimeout(() => finish(2, 'did not finish within 55 s'), 55_000);

/** The `code` of a JSON error envelope, or the body's start. */
function code(body) {
  try {
    return JSON.parse(body).code;
  } catch {
    return body.slice(0, 40);
  }
}

const rssKiB = (pid) => Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);

/** The median of three readings 300 ms apart. */
async function settledRss(pid) {
  const xs = [];
  for (let i = 0; i < 3; i++) {
    if (i) await sleep(300);
    xs.push(rssKiB(pid));
  }
  return median(xs);
}

/** Opens `n` connections, each served one GET; resolves with the ones answered 200. */
async function openServed(port, n) {
  const served = [];
  for (let done = 0; done < n; done += BATCH) {
    const batch = Array.from({ length: Math.min(BATCH, n - done) }, () => new KeepAlive(port, HOST));
    sockets.push(...batch);
    const answers = await Promise.all(batch.map((c) => c.get('/idle')));
    batch.forEach((c, i) => answers[i]?.status === 200 && served.push(c));
  }
  return served;
}

async function main() {
  const { dataPort, worker } = await startIdleGateway(procs, { host: HOST, maxConnections: CONNECTIONS, headerTimeoutMs: HEADER_TIMEOUT_MS });
  // Warm-up: the JIT and uWS's first allocations, on connections closed before the reading.
  for (const c of await openServed(dataPort, 100)) await c.end();
  await sleep(500);
  const before = await settledRss(worker);

  const t0 = performance.now();
  const open = await openServed(dataPort, CONNECTIONS);
  const openMs = performance.now() - t0;
  const atOpen = await settledRss(worker);
  await sleep(Math.max(0, t0 + openMs + HEADER_TIMEOUT_MS + 500 - performance.now())); // every header deadline has passed
  const steady = await settledRss(worker);

  const extra = new KeepAlive(dataPort, HOST);
  sockets.push(extra);
  const refusal = await extra.answer();
  const extraEnd = await Promise.race([extra.closed, sleep(5_000).then(() => 'still open')]);
  const refused = refusal?.status === 503 && code(refusal.body) === 'Svc.Data.TooManyConnections' && extraEnd === 'end';

  const picked = Array.from({ length: CHECKED }, (_, i) => open[Math.floor((i * open.length) / CHECKED)]).filter(Boolean);
  const again = await Promise.all(picked.map((c) => c.get('/again')));
  const answered = again.filter((a) => a?.status === 200 && a.body === 'hello').length;

  const perConn = (kib) => `${fmt((kib - before) / CONNECTIONS, 2)} KiB`;
  const mib = (kib) => `${fmt(kib / 1024, 1)} MiB`;
  console.log(
    table([
      ['idle keep-alive connections (1 worker)', 'reading', 'per connection'],
      ['connections served once, kept open', `${fmt(open.length)} of ${fmt(CONNECTIONS)} in ${fmt(openMs)} ms`, ''],
      ['worker RSS before', mib(before), ''],
      ['worker RSS, all open', mib(atOpen), perConn(atOpen)],
      [`worker RSS, ${HEADER_TIMEOUT_MS / 1000} s later (header deadlines past)`, mib(steady), `${perConn(steady)} (target < 4 KiB)`],
      [`connection ${fmt(CONNECTIONS + 1)}`, `${refusal ? `${refusal.status} ${code(refusal.body)}` : 'no answer'}, ${extraEnd === 'end' ? 'closed by the gateway' : extraEnd}`, refused ? 'ok' : 'FAIL'],
      [`${CHECKED} open connections asked again`, `${answered} answered 200`, answered === CHECKED ? 'ok' : 'FAIL'],
    ]),
  );
  return open.length === CONNECTIONS && refused && answered === CHECKED ? 0 : 1;
}

async function finish(code, why) {
  clearTimeout(overall);
  if (why) process.stderr.write(`bench:idle: ${why}\n`);
  for (const s of sockets) s.socket.destroy();
  await procs.stopAll();
  process.exit(code);
}

main().then(
  (code) => finish(code),
  (err) => finish(2, err.stack ?? String(err)),
);
