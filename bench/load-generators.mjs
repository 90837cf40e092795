// The load generators of run.mjs. wrk and autocannon drive one URL for N seconds with the
// same connections, pipelining and headers; ws-load.mjs drives a WebSocket echo. All report
// { rps, p99Ms, requests, non2xx, errors } (for WebSockets: echoed messages, and refused
// handshakes as non2xx).
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { childOutput } from './child-output.mjs';

const WS_LOAD = join(dirname(fileURLToPath(import.meta.url)), 'ws-load.mjs');

/**
 * The `load(url, seconds, headers)` function for `tool` ('wrk' or 'autocannon').
 * `spawnWrk(args)` starts wrk (pinned to the load generator's CPU when pinning is on) and
 * tracks the child, so that everything run.mjs started stops with it.
 */
export function loadGenerator({ tool, connections, pipelining, spawnWrk }) {
  if (tool !== 'wrk') {
    return (url, seconds, headers = {}) =>
      new Promise((resolve, reject) => {
        autocannon({ url, headers, connections, pipelining, duration: seconds }, (err, r) => {
          if (err) return reject(err);
          resolve({ rps: r.requests.average, p99Ms: r.latency.p99, requests: r.requests.total, non2xx: r.non2xx, errors: r.errors + r.timeouts });
        });
      });
  }
  if (pipelining !== 1) throw new Error('wrk runs without pipelining: use autocannon for pipelining > 1');
  return async (url, seconds, headers = {}) => {
    const h = Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]);
    const { code, signal, out, err } = await childOutput(spawnWrk(['-t1', `-c${connections}`, `-d${seconds}s`, '--latency', ...h, url]));
    if (code !== 0) throw new Error(`wrk exited ${code ?? signal}:\n${out}${err}`);
    return parseWrk(out + err);
  };
}

/**
 * The `load(url, seconds)` of the WebSocket targets: ws-load.mjs with `connections` loops of
 * one `messageBytes` text message and its echo. `spawnNode(args)` starts it (pinned to the load
 * generator's CPU when pinning is on, stdin a pipe so that it stops with run.mjs) and tracks it.
 */
export function wsEchoLoad({ connections, messageBytes, spawnNode }) {
  return async (url, seconds) => {
    const { code, signal, out, err } = await childOutput(spawnNode([WS_LOAD, url, String(connections), String(seconds), String(messageBytes)]));
    if (code !== 0) throw new Error(`ws-load exited ${code ?? signal}:\n${err}`);
    let r;
    try {
      r = JSON.parse(out.trim().split('\n').at(-1));
    } catch {
      throw new Error(`cannot parse ws-load output:\n${out}${err}`);
    }
    return { rps: r.rps, p99Ms: r.p99Ms, requests: r.messages, non2xx: r.handshakeFailures, errors: r.errors };
  };
}

/** Parses `wrk --latency` output. */
export function parseWrk(out) {
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(out);
  const p99 = /^\s*99%\s+([\d.]+)(us|ms|s)\b/m.exec(out);
  const total = /(\d+) requests in/.exec(out);
  if (!rps || !p99 || !total) throw new Error(`cannot parse wrk output:\n${out}`);
  const scale = { us: 0.001, ms: 1, s: 1000 }[p99[2]];
  const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(out);
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  return {
    rps: Number(rps[1]),
    p99Ms: Number(p99[1]) * scale,
    requests: Number(total[1]),
    non2xx: non2xx ? Number(non2xx[1]) : 0,
    errors: sock ? sock.slice(1).reduce((a, b) => a + Number(b), 0) : 0,
  };
}
