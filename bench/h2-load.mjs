// The load generator of the HTTP/2 targets: h2load (Debian's nghttp2-client) over TLS, ALPN h2,
// a few connections with several streams each, for a fixed time. Reports what wrk's parser
// does ({ rps, p99Ms, requests, non2xx, errors }); p99 comes from h2load's per-request log,
// since its summary gives only min, max, mean and sd.
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { childOutput } from './child-output.mjs';

/** Past its -D seconds, h2load gets this long to finish its streams before it is killed. */
const GRACE_MS = 10_000;

/**
 * The `load(url, seconds, headers, { dataFile })` of the h2 targets (an https URL: h2 by ALPN;
 * http: h2c with prior knowledge); with `dataFile`, every request is a POST of that file's
 * bytes. `spawnH2load(args)` starts h2load (pinned to the load generator's CPU when pinning is
 * on) and tracks the child; `tmpDir` holds the per-request log of one call at a time.
 */
export function h2Load({ clients, streams, spawnH2load, tmpDir }) {
  let calls = 0;
  return async (url, seconds, headers = {}, { dataFile = null } = {}) => {
    const logFile = join(tmpDir, `h2load-${++calls}.tsv`);
    const h = Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]);
    const data = dataFile ? ['-d', dataFile] : [];
    const child = spawnH2load([`-c${clients}`, `-m${streams}`, '-t1', `-D${seconds}`, `--log-file=${logFile}`, ...data, ...h, url]);
    const killer = setTimeout(() => child.kill('SIGKILL'), seconds * 1000 + GRACE_MS);
    try {
      const { code, signal, out, err } = await childOutput(child);
      if (code !== 0) throw new Error(`h2load exited ${code ?? signal}:\n${out}${err}`);
      const r = parseH2load(out);
      r.p99Ms = p99FromH2loadLog(readFileSync(logFile, 'utf8'));
      return r;
    } finally {
      clearTimeout(killer);
      rmSync(logFile, { force: true });
    }
  };
}

/**
 * Parses h2load's summary: requests/s, completed requests, 2xx and non-2xx answers (streams still
 * in flight when the time was up count there when their head came) and failed streams (p99Ms is
 * null: see p99FromH2loadLog).
 */
export function parseH2load(out) {
  const finished = /finished in [\d.]+m?s, ([\d.]+) req\/s/.exec(out);
  const requests = /requests: \d+ total, \d+ started, (\d+) done, \d+ succeeded, (\d+) failed, \d+ errored, \d+ timeout/.exec(out);
  const status = /status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/.exec(out);
  if (!finished || !requests || !status) throw new Error(`cannot parse h2load output:\n${out}`);
  // Without ALPN h2 h2load sends nothing and reports zero requests: a target not speaking h2 must not read as idle.
  if (/No protocol negotiated/.test(out)) throw new Error(`h2load: the server did not negotiate h2:\n${out}`);
  return {
    rps: Number(finished[1]),
    p99Ms: null,
    requests: Number(requests[1]),
    answered2xx: Number(status[1]),
    non2xx: Number(status[2]) + Number(status[3]) + Number(status[4]),
    // "failed" counts every stream that ended without an answer, errored and timed out ones included.
    errors: Number(requests[2]),
  };
}

/**
 * The 99th percentile of the response times (ms) in h2load's --log-file (start µs, status, µs to
 * the end of the response, tab-separated); failed streams (status -1) are not answers and are left
 * out. Null when there is no answer.
 */
export function p99FromH2loadLog(text) {
  const micros = [];
  for (const line of text.split('\n')) {
    const cols = line.split('\t');
    if (cols.length >= 3 && Number(cols[1]) > 0) micros.push(Number(cols[2]));
  }
  if (micros.length === 0) return null;
  micros.sort((a, b) => a - b);
  return micros[Math.min(micros.length - 1, Math.ceil(micros.length * 0.99) - 1)] / 1000;
}
