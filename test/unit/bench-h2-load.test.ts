import { test } from 'node:test';
import assert from 'node:assert/strict';
// @ts-expect-error: the bench is plain JavaScript without type declarations
import { p99FromH2loadLog, parseH2load } from '../../bench/h2-load.mjs';

type H2Result = { rps: number; p99Ms: number | null; requests: number; answered2xx: number; non2xx: number; errors: number };

// h2load 1.52's report of a timed run (-D), as Debian 12's nghttp2-client prints it.
const report = (requests: string, status: string, extra = '') => `starting benchmark...
spawning thread #0: 16 total client(s). Timing-based test with 0s of warm-up time and 2s of main duration for measurements.
${extra}Application protocol: h2
Main benchmark duration is over for thread #0. Stopping all clients.

finished in 2.00s, 9256.50 req/s, 1.23MB/s
requests: ${requests}
status codes: ${status}
traffic: 2.47MB (2587240) total, 289.61KB (296560) headers (space savings 91.86%), 867.75KB (888576) data
                     min         max         mean         sd        +/- sd
time for request:      718us     89.22ms     16.98ms      9.21ms    70.12%
`;

test('a clean run: requests/s and completed requests from the summary, no non-2xx, no errors, p99 left to the log', () => {
  const r = parseH2load(report('18513 total, 18673 started, 18513 done, 18513 succeeded, 0 failed, 0 errored, 0 timeout', '18513 2xx, 0 3xx, 0 4xx, 0 5xx')) as H2Result;
  assert.deepEqual(r, { rps: 9256.5, p99Ms: null, requests: 18513, answered2xx: 18513, non2xx: 0, errors: 0 });
});

test('3xx, 4xx and 5xx answers count as non-2xx; failed streams (errored and timed out included) as errors', () => {
  const r = parseH2load(report('1000 total, 1010 started, 990 done, 960 succeeded, 30 failed, 20 errored, 4 timeout', '900 2xx, 60 3xx, 25 4xx, 5 5xx')) as H2Result;
  assert.deepEqual([r.requests, r.answered2xx, r.non2xx, r.errors], [990, 900, 90, 30]);
});

test('a server that negotiates no h2 is an error, not an idle target; so is output that is not a report', () => {
  const noH2 = report('0 total, 16 started, 0 done, 0 succeeded, 16 failed, 16 errored, 0 timeout', '0 2xx, 0 3xx, 0 4xx, 0 5xx', 'No protocol negotiated. Aborted.\n');
  assert.throws(() => parseH2load(noH2), /did not negotiate h2/);
  assert.throws(() => parseH2load('h2load: connect failed\n'), /cannot parse h2load output/);
});

test("p99 from the per-request log, in ms: the 99th of 100 answers, failed streams left out; null with no answer", () => {
  // 100 answers of 1..100 ms (in µs), out of order, and two failed streams that would be the slowest.
  const lines = Array.from({ length: 100 }, (_, i) => `1733356800${String(i).padStart(6, '0')}\t200\t${((i * 37) % 100 + 1) * 1000}`);
  lines.push('1733356800999998\t-1\t500000000', '1733356800999999\t-1\t600000000');
  assert.equal(p99FromH2loadLog(lines.join('\n') + '\n'), 99);
  assert.equal(p99FromH2loadLog('1733356800000000\t-1\t1000\n'), null);
  assert.equal(p99FromH2loadLog(''), null);
});
