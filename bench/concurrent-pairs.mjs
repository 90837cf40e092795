// The observability pairs (and nginx's access log pair, for reference) measured a second
// way: both servers of a pair loaded at the same time, each by its own load generator,
// while they share the server's CPU. Measured one after
// the other, two 2-second windows of this VM differ by up to ±30 % in speed (the same server
// reads 80 to 120 µs a request from one window to the next), which buries a 5 or 10 % cost;
// measured together, both sides see the same moments. The ratio is requests per CPU-second:
// the server CPU per request of the denominator over that of the numerator, which is what a
// requests/s ratio on a saturated core reads (the share of the core each side got does not
// enter it). The sequential ratios stay in the table beside these. The control pair, two
// gateways alike, reads what the method gives when nothing differs but the processes.
import { median } from './table.mjs';
import { cpuUsPerRequest, treeCpuMs } from './process-cpu.mjs';
import { RATIOS } from './report.mjs';

/** The sequential ratios measured again loaded at once: the observability pairs, and nginx's access log for reference. */
const AT_ONCE = ['observeOffTwinVsOff', 'observeDefaultsVsOff', 'observeAccessLogVsOff', 'observeTracingVsOff', 'nginxAccessLogVsNginx'];

/** The pairs of AT_ONCE whose two targets are both being measured (label, sides and target as in RATIOS). */
export function concurrentPairsOf(targets) {
  const byKey = new Map(targets.map((t) => [t.key, t]));
  return RATIOS.filter(([key, , a, b]) => AT_ONCE.includes(key) && byKey.has(a) && byKey.has(b)).map(([key, label, a, b, target]) => ({
    key: `${key}Concurrent`,
    label: `${label}, at once (per CPU-s)`,
    a: byKey.get(a),
    b: byKey.get(b),
    target,
  }));
}

/**
 * Loads both targets of `pair` at once (`warmup` seconds, then `seconds` measured) and returns
 * each side's requests/s and server CPU per request, and the pair's ratio per CPU-second.
 */
export async function measureConcurrently(load, pair, warmup, seconds, headers) {
  await Promise.all([load(pair.a.url, warmup, headers), load(pair.b.url, warmup, headers)]);
  const before = [treeCpuMs(pair.a.pid), treeCpuMs(pair.b.pid)];
  const [ra, rb] = await Promise.all([load(pair.a.url, seconds, headers), load(pair.b.url, seconds, headers)]);
  const after = [treeCpuMs(pair.a.pid), treeCpuMs(pair.b.pid)];
  const side = (i, r) => ({ rps: r.rps, requests: r.requests, serverCpuUsPerRequest: cpuUsPerRequest(before[i], after[i], r.requests), non2xx: r.non2xx, errors: r.errors });
  const a = side(0, ra);
  const b = side(1, rb);
  const perCpu = a.serverCpuUsPerRequest && b.serverCpuUsPerRequest ? b.serverCpuUsPerRequest / a.serverCpuUsPerRequest : null;
  return { a, b, perCpu, rps: a.rps / b.rps };
}

/** Each pair's ratio: the median of its rounds (null without /proc, where CPU time cannot be read). */
export function concurrentRatios(pairs, rounds) {
  const ratios = {};
  for (const p of pairs) {
    const perRound = rounds[p.key].map((r) => r.perCpu);
    const value = perRound.includes(null) ? null : median(perRound);
    ratios[p.key] = { label: p.label, value, perRound, rpsPerRound: rounds[p.key].map((r) => r.rps), target: p.target, pass: value === null || p.target === null ? null : value >= p.target, rounds: rounds[p.key] };
  }
  return ratios;
}
