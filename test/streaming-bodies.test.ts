import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { createHash } from 'node:crypto';
import { startGateway, type Gateway } from './helpers/gateway.js';
import { request } from './helpers/http.js';
import { PATTERN, patternSha256, startUpstream, writePattern, type Upstream, type UpstreamRequest } from './helpers/upstream.js';
import { ROOT_KEY, apply, clusterStatus } from './helpers/admin.js';
import { MiB, sampleRss, totalRss } from './helpers/proc.js';
import { sleep, waitFor } from './helpers/wait.js';
import type { Json } from './helpers/json.js';

const SIZE = 50 * MiB;
const RSS_LIMIT = 30_000_000; // 30 MB
/** How long the slow side stops reading, after the first MiB. */
const STALL_MS = 2_000;
/**
 * Bytes the fast side may have pushed by the end of a stall: the first MiB plus what the
 * kernel socket buffers (two loopback connections, autotuned; 9-21 MiB measured here)
 * and the gateway's stream buffers hold on the way. Without backpressure the gateway
 * reads all 50 MiB from the fast side meanwhile (measured: 50.0 MiB).
 */
const IN_FLIGHT_LIMIT = 35 * MiB;
const TIMEOUT = { timeout: 120_000 };

async function setup(t: TestContext): Promise<{ gw: Gateway; up: Upstream; pids: number[] }> {
  const up = await startUpstream(t);
  const gw = await startGateway(t, { workers: 1, keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'files', { targets: [up.target] }],
    ['route', 'files', { pathPrefix: '/files', cluster: 'files' }],
  ]);
  const st = await clusterStatus(gw);
  const pids = [gw.pid, ...st.workers.map((w) => w.pid!)];
  return { gw, up, pids };
}

/**
 * GET a streamed body of `size` bytes. With `stallMs`, the client stops reading for that
 * long after the first MiB, calls `duringStall` shortly before it reads on, then reads
 * at full speed.
 */
function download(
  gw: Gateway,
  size: number,
  { stallMs = 0, chunked = false, duringStall }: { stallMs?: number; chunked?: boolean; duringStall?: () => void },
): Promise<{ status: number; bytes: number; sha256: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    // A fresh upstream connection for every transfer: no kernel buffers grown by an earlier one.
    const headers: Record<string, string> = { 'x-up-stream-bytes': String(size), 'x-up-close': '1' };
    if (chunked) headers['x-up-chunked'] = '1';
    const req = httpRequest(`${gw.dataUrl}/files/download`, { agent: false, headers }, (res) => {
      const h = createHash('sha256');
      let bytes = 0;
      let stalled = false;
      res.on('data', (c: Buffer) => {
        h.update(c);
        bytes += c.length;
        if (stallMs && !stalled && bytes >= MiB) {
          stalled = true;
          res.pause();
          setTimeout(() => duringStall?.(), stallMs - 200);
          setTimeout(() => res.resume(), stallMs);
        }
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, sha256: h.digest('hex'), headers: res.headers }));
      res.on('error', reject);
    });
    req.setTimeout(60_000, () => req.destroy(new Error('download: no progress for 60 s')));
    req.on('error', reject);
    req.end();
  });
}

/**
 * PUT `size` bytes as fast as the gateway takes them; with `upstreamStallMs` the upstream
 * stops reading for that long after the first MiB. The upstream answers with the byte
 * count and hash it received. `progress.written` counts what the client got to write.
 */
function upload(
  gw: Gateway,
  size: number,
  { upstreamStallMs = 0, chunked = false, progress = { written: 0 } }: { upstreamStallMs?: number; chunked?: boolean; progress?: { written: number } },
): Promise<{ status: number; json: Json }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { 'content-type': 'application/octet-stream', 'x-up-close': '1' };
    if (upstreamStallMs) headers['x-up-read-pause'] = `${upstreamStallMs}/1/1`;
    if (!chunked) headers['content-length'] = String(size);
    const req = httpRequest(`${gw.dataUrl}/files/upload`, { method: 'PUT', agent: false, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d));
      res.on('end', () => {
        try {
          resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) });
        } catch {
          reject(new Error(`upload: ${res.statusCode} ${text.slice(0, 300)}`));
        }
      });
    });
    req.setTimeout(60_000, () => req.destroy(new Error('upload: no progress for 60 s')));
    req.on('error', reject);
    writePattern(req, size, (n) => (progress.written = n))
      .then(() => {
        if (!req.destroyed) req.end();
      })
      .catch(reject);
  });
}

/**
 * The gateway's summed RSS (supervisor + workers), sampled every 50 ms, must not grow by
 * 30 MB during `run`: its peak is compared with the gateway's working set before it,
 * which is the higher of the RSS just before `run` and the peak during `warmUp` (the
 * same transfer once at full speed, with no stall).
 *
 * Why a warm-up: on a worker's first large transfer V8 grows its young generation and
 * lets garbage chunk copies (external memory) pile up to its GC threshold; measured on
 * a fresh worker that alone is +23..36 MB whether or not anything stalls, and the RSS
 * right after the warm-up swings by tens of MB as the GC hands memory back. Data held
 * because one side is slow comes on top of that working set, and is also checked
 * directly, independent of the allocator, by the in-flight byte counts of each test.
 */
async function measured<T>(t: TestContext, pids: number[], what: string, warmUp: () => Promise<unknown>, run: () => Promise<T>): Promise<T> {
  const warm = sampleRss(pids, 50);
  await warmUp();
  const warmPeak = warm.stop().peak;
  await sleep(300);
  const before = totalRss(pids);
  const baseline = Math.max(before, warmPeak);
  const sampler = sampleRss(pids, 50);
  const t0 = Date.now();
  let result: T;
  let stats: { peak: number; samples: number };
  try {
    result = await run();
  } finally {
    stats = sampler.stop();
  }
  const { peak, samples } = stats;
  const growth = peak - baseline;
  const mib = (n: number) => (n / MiB).toFixed(1);
  t.diagnostic(`${what}: ${Date.now() - t0} ms, gateway RSS before ${mib(before)} MiB, warm-up peak ${mib(warmPeak)} MiB -> peak ${mib(peak)} MiB (+${mib(growth)} MiB over the working set, ${samples} samples)`);
  assert.ok(samples >= 20, `RSS was sampled during the transfer (${samples})`);
  assert.ok(growth < RSS_LIMIT, `${what}: gateway RSS grew by ${mib(growth)} MiB over its working set (limit 30 MB)`);
  return result;
}

const lastRequest = (up: Upstream, url: string): UpstreamRequest | undefined => up.requests.filter((r) => r.url === url).at(-1);

for (const chunked of [false, true]) {
  const kind = chunked ? 'chunked (no Content-Length)' : 'Content-Length';
  test(`a 50 MB ${kind} download passes through intact while the client stalls: the upstream is held back, RSS grows < 30 MB`, TIMEOUT, async (t) => {
    const { gw, up, pids } = await setup(t);
    let upstreamSentDuringStall = -1;
    let downloadRequests = 0;
    const r = await measured(
      t,
      pids,
      `${kind} download`,
      () => download(gw, SIZE, { chunked }),
      () => {
        downloadRequests = up.requests.length;
        return download(gw, SIZE, {
          chunked,
          stallMs: STALL_MS,
          duringStall: () => (upstreamSentDuringStall = up.requests[downloadRequests]?.sentBytes ?? -1),
        });
      },
    );
    assert.equal(r.status, 200);
    assert.equal(r.bytes, SIZE);
    assert.equal(r.sha256, patternSha256(SIZE));
    if (!chunked) assert.equal(r.headers['content-length'], String(SIZE), 'a known length is relayed as Content-Length');
    t.diagnostic(`upstream had written ${(upstreamSentDuringStall / MiB).toFixed(1)} MiB by the end of the client's stall`);
    assert.ok(upstreamSentDuringStall >= MiB, 'the stall was observed');
    assert.ok(upstreamSentDuringStall < IN_FLIGHT_LIMIT, `backpressure: the upstream wrote ${(upstreamSentDuringStall / MiB).toFixed(1)} MiB while the client read 1 MiB`);
    const rec = lastRequest(up, '/files/download')!;
    assert.equal(rec.finished, true);
    assert.equal(rec.sentBytes, SIZE);
  });

  test(`a 50 MB ${kind} upload passes through intact while the upstream stalls: the client is held back, RSS grows < 30 MB`, TIMEOUT, async (t) => {
    const { gw, up, pids } = await setup(t);
    const size = chunked ? SIZE + 12345 : SIZE;
    const progress = { written: 0 };
    let clientWroteDuringStall = -1;
    const r = await measured(
      t,
      pids,
      `${kind} upload`,
      () => upload(gw, size, { chunked }),
      () => {
        // The upstream stalls once it has read 1 MiB: what the client had written when the
        // stall ends is what the gateway and the kernel's buffers took meanwhile.
        up.onReadResume = () => {
          if (clientWroteDuringStall === -1) clientWroteDuringStall = progress.written;
        };
        return upload(gw, size, { chunked, upstreamStallMs: STALL_MS, progress });
      },
    );
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.equal(r.json.bodyBytes, size);
    assert.equal(r.json.bodySha256, patternSha256(size));
    if (!chunked) assert.equal(r.json.headers['content-length'], String(size));
    t.diagnostic(`client had written ${(clientWroteDuringStall / MiB).toFixed(1)} MiB when the upstream's stall ended`);
    assert.ok(clientWroteDuringStall >= MiB, 'the stall was observed');
    assert.ok(clientWroteDuringStall < IN_FLIGHT_LIMIT, `backpressure: the client wrote ${(clientWroteDuringStall / MiB).toFixed(1)} MiB while the upstream read 1 MiB`);
    assert.equal(lastRequest(up, '/files/upload')!.bodyDone, true);
  });
}

test('a client that disconnects mid-download: the upstream response is aborted, the worker survives and does not leak', TIMEOUT, async (t) => {
  const { gw, up, pids } = await setup(t);
  const workerPid = (await clusterStatus(gw)).workers[0]!.pid!;
  await download(gw, SIZE, {}); // heap and buffers at their working size (the young generation grows once)
  await sleep(300);
  const baseline = totalRss(pids);

  for (let round = 0; round < 10; round++) {
    const before = up.requests.length;
    const received = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(`${gw.dataUrl}/files/abandon/${round}`, { agent: false, headers: { 'x-up-stream-bytes': String(SIZE) } }, (res) => {
        let bytes = 0;
        res.on('data', (c: Buffer) => {
          bytes += c.length;
          if (bytes >= MiB) {
            req.destroy(); // hang up after ~1 MiB
            resolve(bytes);
          }
        });
        res.on('error', () => {});
      });
      req.on('error', () => {});
      req.setTimeout(10_000, () => reject(new Error('no data')));
      req.end();
    });
    assert.ok(received >= MiB && received < SIZE);
    const rec = await waitFor(
      `round ${round}: the upstream sees its response aborted`,
      () => {
        const r = up.requests.slice(before).find((x) => x.url === `/files/abandon/${round}`);
        return r?.closed ? r : undefined;
      },
      { timeoutMs: 5_000 },
    );
    assert.equal(rec.aborted, true, `round ${round}: 'close' before the response finished`);
    assert.equal(rec.finished, false);
    assert.ok(rec.sentBytes < SIZE, `round ${round}: the upstream stopped early (${rec.sentBytes} of ${SIZE} bytes written)`);
  }

  const st = await clusterStatus(gw);
  assert.equal(st.workers[0]!.pid, workerPid, 'the same worker process');
  assert.equal(st.workers[0]!.restarts, 0);
  const ok = await request(`${gw.dataUrl}/files/after`);
  assert.equal(ok.status, 200, ok.text);
  const full = await download(gw, 5 * MiB, {});
  assert.equal(full.sha256, patternSha256(5 * MiB), 'full downloads still work');
  await sleep(300);
  const growth = totalRss(pids) - baseline;
  t.diagnostic(`RSS after 10 abandoned downloads: +${(growth / MiB).toFixed(1)} MiB`);
  assert.ok(growth < RSS_LIMIT, `no leak: +${(growth / MiB).toFixed(1)} MiB`);
  // The upstream connections of the aborted exchanges were closed, not left hanging.
  await waitFor('at most a few idle keep-alive sockets at the upstream', () => up.openSockets() <= 2, { timeoutMs: 5_000 });
});

test('a client that disconnects mid-upload: the upstream request is aborted and the worker survives', TIMEOUT, async (t) => {
  const { gw, up } = await setup(t);
  const workerPid = (await clusterStatus(gw)).workers[0]!.pid!;
  const before = up.requests.length;
  await new Promise<void>((resolve) => {
    const req = httpRequest(`${gw.dataUrl}/files/half-upload`, {
      method: 'PUT',
      agent: false,
      headers: { 'content-length': String(SIZE), 'content-type': 'application/octet-stream' },
    });
    req.on('error', () => resolve());
    req.on('close', () => resolve());
    req.write(PATTERN, () => setTimeout(() => req.destroy(), 200)); // 1 MiB of 50, then hang up
  });
  const rec = await waitFor(
    'the upstream sees the request body cut short',
    () => {
      const r = up.requests.slice(before).find((x) => x.url === '/files/half-upload');
      return r?.closed ? r : undefined;
    },
    { timeoutMs: 5_000 },
  );
  assert.equal(rec.bodyDone, false, 'the body never completed at the upstream');
  assert.ok(rec.bodyBytes < SIZE, `the upstream got ${rec.bodyBytes} bytes`);
  const st = await clusterStatus(gw);
  assert.equal(st.workers[0]!.pid, workerPid);
  const ok = await upload(gw, MiB, {});
  assert.equal(ok.json.bodySha256, patternSha256(MiB));
});

test('an upstream that dies mid-body: the client connection is cut (never a short body passed off as whole) and the worker logs why', TIMEOUT, async (t) => {
  const { gw, up } = await setup(t);
  up.handler = (req, res) => {
    if (req.url !== '/files/dies') return false;
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(MiB) });
    res.write(PATTERN.subarray(0, 64 * 1024), () => setTimeout(() => res.socket?.destroy(), 50));
    return true;
  };
  const outcome = await new Promise<{ bytes: number; error: string | null; ended: boolean }>((resolve) => {
    let bytes = 0;
    const req = httpRequest(`${gw.dataUrl}/files/dies`, { agent: false }, (res) => {
      assert.equal(res.statusCode, 200);
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('end', () => resolve({ bytes, error: null, ended: true }));
      res.on('error', (err) => resolve({ bytes, error: (err as NodeJS.ErrnoException).code ?? err.message, ended: false }));
    });
    req.on('error', (err) => resolve({ bytes, error: (err as NodeJS.ErrnoException).code ?? err.message, ended: false }));
    req.end();
  });
  assert.equal(outcome.ended, false, `the client must not see a complete response (${outcome.bytes} of ${MiB} bytes)`);
  assert.ok(outcome.bytes < MiB);
  const line = await waitFor('the log line of the cut response', () => gw.logLines().find((l) => l.msg === 'upstream failed after the response head was sent; client connection cut'), { timeoutMs: 5_000 });
  assert.equal(line.path, '/files/dies');
  assert.equal(line.level, 40);
  assert.equal(typeof line.code, 'string');
});
