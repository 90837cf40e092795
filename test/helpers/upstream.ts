import type { Writable } from 'node:stream';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createHash } from 'node:crypto';
import type { AddressInfo, Socket } from 'node:net';
import type { TestContext } from 'node:test';
import { sleep } from './wait.js';

/**
 * An in-process upstream (node:http on 127.0.0.1, port chosen by the kernel) that the
 * gateway forwards to. By default it answers 200 with a JSON echo of what it received:
 * `{method, url, headers, rawHeaders, bodyBytes, bodySha256, remotePort}`, where `url` is
 * the request target exactly as it came off the wire (path and query, undecoded).
 *
 * Behaviour is steered by request headers (ordinary end-to-end headers, which the
 * gateway forwards):
 *  - `x-up-status: <n>`           answer with this status;
 *  - `x-up-delay-ms: <n>`         wait before answering (headers included);
 *  - `x-up-stream-bytes: <n>`     instead of the echo, stream n bytes of PATTERN with
 *                                 backpressure (Content-Length set unless `x-up-chunked: 1`);
 *  - `x-up-headers: <json>`       extra response headers, `{name: value | [values]}`;
 *  - `x-up-close: 1`               close the connection after this exchange (no keep-alive);
 *  - `x-up-read-pause: <ms>/<mb>[/<n>]` read the request body slowly: pause <ms> after every
 *                                 <mb> MiB (only the first <n> times when given).
 *
 * Every request is recorded in `requests` (in arrival order) with how its exchange ended.
 */

/** 1 MiB of deterministic bytes, repeated to build any streamed body. */
export const PATTERN: Buffer = (() => {
  const b = Buffer.alloc(1 << 20);
  let x = 0x12345678;
  for (let i = 0; i < b.length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    b[i] = x & 0xff;
  }
  return b;
})();

/** The SHA-256 (hex) of the first `n` bytes of the endless PATTERN stream. */
export function patternSha256(n: number): string {
  const h = createHash('sha256');
  let left = n;
  while (left > 0) {
    const k = Math.min(left, PATTERN.length);
    h.update(k === PATTERN.length ? PATTERN : PATTERN.subarray(0, k));
    left -= k;
  }
  return h.digest('hex');
}

export interface UpstreamRequest {
  method: string;
  /** The raw request target (path + query) as received. */
  url: string;
  headers: IncomingHttpHeaders;
  rawHeaders: string[];
  remotePort: number;
  /** Body bytes received so far (final once `bodyDone`). */
  bodyBytes: number;
  bodySha256: string | null;
  /** The request body ended normally. */
  bodyDone: boolean;
  /** Response bytes written for a streamed answer. */
  sentBytes: number;
  /** The response was completely written. */
  finished: boolean;
  /** The connection closed before the response was complete (the gateway aborted it). */
  aborted: boolean;
  /** The response's 'close' fired (either way). */
  closed: boolean;
}

export interface Upstream {
  port: number;
  /** `127.0.0.1:<port>`, ready for a cluster's targets. */
  target: string;
  url: string;
  requests: UpstreamRequest[];
  /** Sockets currently open to the upstream. */
  openSockets(): number;
  /** Replace the default behaviour; return true when the request was handled. */
  handler: ((req: IncomingMessage, res: ServerResponse, rec: UpstreamRequest) => boolean | void) | null;
  /** Called as an `x-up-read-pause` pause ends, before reading resumes: the moment its stall is over. */
  onReadResume: (() => void) | null;
  close(): Promise<void>;
}

export async function startUpstream(t?: TestContext): Promise<Upstream> {
  const sockets = new Set<Socket>();
  const requests: UpstreamRequest[] = [];
  const up: Upstream = {
    port: 0,
    target: '',
    url: '',
    requests,
    openSockets: () => sockets.size,
    handler: null,
    onReadResume: null,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };

  const server: Server = createServer((req, res) => {
    const rec: UpstreamRequest = {
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      rawHeaders: req.rawHeaders,
      remotePort: req.socket.remotePort ?? 0,
      bodyBytes: 0,
      bodySha256: null,
      bodyDone: false,
      sentBytes: 0,
      finished: false,
      aborted: false,
      closed: false,
    };
    requests.push(rec);
    res.on('finish', () => (rec.finished = true));
    res.on('close', () => {
      rec.closed = true;
      if (!rec.finished) rec.aborted = true;
    });
    void serve(req, res, rec, up).catch((err) => {
      if (!res.headersSent && !res.destroyed) {
        res.statusCode = 500;
        res.end(String(err));
      } else res.destroy();
    });
  });
  server.keepAliveTimeout = 10_000;
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // Every field a client sent (node keeps the first 1,000 by default): tests count what the gateway forwarded.
    server.maxHeadersCount = 0;
    server.listen({ host: '127.0.0.1', port: 0 }, () => resolve());
  });
  up.port = (server.address() as AddressInfo).port;
  up.target = `127.0.0.1:${up.port}`;
  up.url = `http://${up.target}`;
  t?.after(() => up.close());
  return up;
}

async function serve(req: IncomingMessage, res: ServerResponse, rec: UpstreamRequest, up: Upstream): Promise<void> {
  // Read the whole request body (hashing it), slowly if asked to.
  const pause = /^(\d+)\/(\d+)(?:\/(\d+))?$/.exec(String(req.headers['x-up-read-pause'] ?? ''));
  const pauseMs = pause ? Number(pause[1]) : 0;
  const pauseEvery = pause ? Number(pause[2]) * (1 << 20) : Infinity;
  let pausesLeft = pause?.[3] !== undefined ? Number(pause[3]) : Infinity;
  const hash = createHash('sha256');
  await new Promise<void>((resolve) => {
    let nextPause = pauseEvery;
    req.on('data', (c: Buffer) => {
      rec.bodyBytes += c.length;
      hash.update(c);
      if (rec.bodyBytes >= nextPause && pausesLeft > 0) {
        nextPause += pauseEvery;
        pausesLeft--;
        req.pause();
        setTimeout(() => {
          up.onReadResume?.();
          req.resume();
        }, pauseMs);
      }
    });
    req.on('end', () => {
      rec.bodyDone = true;
      rec.bodySha256 = hash.digest('hex');
      resolve();
    });
    req.on('error', () => resolve());
    req.on('close', () => resolve());
  });
  if (!rec.bodyDone) return; // the client went away mid-body

  if (req.headers['x-up-close'] === '1') res.shouldKeepAlive = false;
  if (up.handler && up.handler(req, res, rec) === true) return;

  const delay = Number(req.headers['x-up-delay-ms'] ?? 0);
  if (delay > 0) await sleep(delay);
  if (res.destroyed) return;

  const status = Number(req.headers['x-up-status'] ?? 200);
  const extra = req.headers['x-up-headers'];
  const setExtra = () => {
    if (typeof extra !== 'string') return;
    for (const [k, v] of Object.entries(JSON.parse(extra) as Record<string, string | string[]>)) res.setHeader(k, v);
  };

  const streamBytes = req.headers['x-up-stream-bytes'];
  if (streamBytes !== undefined) {
    const total = Number(streamBytes);
    res.statusCode = status;
    res.setHeader('content-type', 'application/octet-stream');
    if (req.headers['x-up-chunked'] !== '1') res.setHeader('content-length', String(total));
    setExtra();
    await streamPattern(res, total, rec);
    return;
  }

  const body = JSON.stringify({
    method: rec.method,
    url: rec.url,
    headers: rec.headers,
    rawHeaders: rec.rawHeaders,
    bodyBytes: rec.bodyBytes,
    bodySha256: rec.bodySha256,
    remotePort: rec.remotePort,
  });
  res.statusCode = status;
  res.setHeader('content-type', 'application/json');
  res.setHeader('content-length', String(Buffer.byteLength(body)));
  setExtra();
  res.end(body);
}

/** Writes `total` bytes of PATTERN in 64 KiB chunks, waiting for 'drain' under backpressure. */
async function streamPattern(res: ServerResponse, total: number, rec: UpstreamRequest): Promise<void> {
  await writePattern(res, total, (n) => (rec.sentBytes = n));
  if (!res.destroyed) res.end();
}

/**
 * Writes the first `size` bytes of the PATTERN stream to `w` in 64 KiB pieces, waiting
 * for 'drain' whenever `w` asks to (backpressure); `onProgress` gets the bytes written so
 * far after each piece. Stops early once `w` is destroyed; never ends `w`.
 */
export async function writePattern(w: Writable, size: number, onProgress?: (written: number) => void): Promise<void> {
  let off = 0;
  while (off < size) {
    if (w.destroyed) return;
    const start = off % PATTERN.length;
    const n = Math.min(64 * 1024, size - off, PATTERN.length - start);
    const ok = w.write(PATTERN.subarray(start, start + n));
    off += n;
    onProgress?.(off);
    if (!ok) {
      await new Promise<void>((resolve) => {
        const done = () => {
          w.off('drain', done);
          w.off('close', done);
          resolve();
        };
        w.on('drain', done);
        w.on('close', done);
      });
    }
  }
}
