import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { TestContext } from 'node:test';
import { Client } from 'undici';

/** One request of a load: when it started (Date.now(), comparable with other processes' clocks), how long it took, how it ended. */
export interface Sample {
  at: number;
  ms: number;
  path: string;
  /** 0 when the request failed without an answer (see `error`). */
  status: number;
  error?: string;
}

export interface Load {
  samples: Sample[];
  /** Stops every client after its request in flight and closes them. */
  stop(): Promise<void>;
}

/**
 * `clients` keep-alive HTTP/1.1 connections to `url`, each sending GETs of `paths` (in turn)
 * back to back, or `pauseMs` apart, with Host `host`, until stopped. Every answer is a Sample.
 */
export function startLoad(t: TestContext, url: string, o: { clients: number; paths: string[]; host: string; pauseMs?: number; timeoutMs?: number }): Load {
  const samples: Sample[] = [];
  let stopped = false;
  const timeoutMs = o.timeoutMs ?? 10_000;
  const clients = Array.from({ length: o.clients }, () => new Client(url, { pipelining: 1, keepAliveTimeout: 60_000, headersTimeout: timeoutMs, bodyTimeout: timeoutMs }));
  t.after(() => Promise.all(clients.map((c) => c.destroy())));
  const loops = clients.map(async (c, i) => {
    let n = i;
    while (!stopped) {
      const path = o.paths[n++ % o.paths.length]!;
      const at = Date.now();
      const t0 = performance.now();
      try {
        const r = await c.request({ path, method: 'GET', headers: { host: o.host } });
        await r.body.text();
        samples.push({ at, ms: performance.now() - t0, path, status: r.statusCode });
      } catch (err) {
        samples.push({ at, ms: performance.now() - t0, path, status: 0, error: (err as Error).message });
      }
      if (o.pauseMs) await new Promise((r) => setTimeout(r, o.pauseMs));
    }
  });
  return {
    samples,
    stop: async () => {
      stopped = true;
      await Promise.all(loops);
      await Promise.all(clients.map((c) => c.close()));
    },
  };
}

/** The q-quantile (0..1) of `values` by the nearest-rank method; NaN when empty. */
export function quantile(values: number[], q: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/** A request's latency for the percentiles: one that did not get its 200 never got what it asked for (Infinity), however fast it was refused. */
export const latency = (s: Sample): number => (s.status === 200 ? s.ms : Infinity);

/** The p99 of each `windowMs` slice of [from, to) (by start time, see `latency`), windows with fewer than `min` samples left out. */
export function windowP99s(samples: Sample[], from: number, to: number, windowMs: number, min = 50): number[] {
  return pairedWindowP99s(samples, from, to, windowMs, () => true, min).map(([p]) => p);
}

/**
 * Per `windowMs` slice of [from, to): [p99 of the samples `pick` takes, p99 of the others].
 * Both halves of a window ran at the same instants on the same connections, so what the
 * machine does to both (another process's burst) cancels out of their difference.
 */
export function pairedWindowP99s(samples: Sample[], from: number, to: number, windowMs: number, pick: (s: Sample) => boolean, min = 50): [number, number][] {
  const out: [number, number][] = [];
  for (let w = from; w + windowMs <= to; w += windowMs) {
    const inside = samples.filter((s) => s.at >= w && s.at < w + windowMs);
    const picked = inside.filter(pick).map(latency);
    const others = inside.filter((s) => !pick(s)).map(latency);
    if (picked.length >= min && (others.length >= min || others.length === 0)) out.push([quantile(picked, 0.99), quantile(others, 0.99)]);
  }
  return out;
}

export const round = (n: number, digits = 2) => Number(n.toFixed(digits));

export interface ProbedUpstream {
  port: number;
  target: string;
  /** Arrival time (Date.now()) of every request for the probe path, in order. */
  probes: number[];
  /** Requests for any other path. */
  served(): number;
}

/**
 * A minimal upstream on 127.0.0.1: 200 `ok` to everything, keep-alive; arrivals on
 * `probePath` (a cluster's healthCheck path) are timed. Lighter than startUpstream, which
 * keeps every request: a load of 100,000 requests should cost the test process little.
 */
export async function startProbedUpstream(t: TestContext, probePath = '/hc'): Promise<ProbedUpstream> {
  const probes: number[] = [];
  let served = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    if (req.url === probePath) probes.push(Date.now());
    else served++;
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
    res.end('ok');
  });
  server.keepAliveTimeout = 60_000;
  server.on('connection', (s) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  });
  const port = (server.address() as AddressInfo).port;
  return { port, target: `127.0.0.1:${port}`, probes, served: () => served };
}

/** Gaps (ms) between consecutive times of `times` that fall in [from, to]. */
export function gapsWithin(times: number[], from: number, to: number): number[] {
  const inside = times.filter((x) => x >= from && x <= to);
  return inside.slice(1).map((x, i) => x - inside[i]!);
}

/** Gaps (ms) between consecutive `times` from the last one at or before `from` to the first one at or after `to`. */
export function gapsAround(times: number[], from: number, to: number): number[] {
  let first = times.findLastIndex((x) => x <= from);
  if (first < 0) first = 0;
  let last = times.findIndex((x) => x >= to);
  if (last < 0) last = times.length - 1;
  const inside = times.slice(first, last + 1);
  return inside.slice(1).map((x, i) => x - inside[i]!);
}
