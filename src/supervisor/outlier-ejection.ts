import type { CompiledGeneration } from '../contracts/generation.js';
import type { HealthTable } from '../contracts/ipc.js';
import type { Logger } from '../shared/logger.js';
import type { OutlierView } from '../admin/services.js';

interface Ejection {
  /** Ejections so far: the next lasts ejectMs × 2^times (capped), so a target that keeps failing stays out longer. */
  times: number;
  until: number;
  timer: NodeJS.Timeout | null;
  /** When it last came back, and how long it had been out: a target quiet for that long starts over. */
  backAt: number;
  lastMs: number;
}

const MAX_DOUBLINGS = 5;

/**
 * Outlier ejection, decided node-wide: a worker reports a target that failed
 * `consecutiveFailures` requests in a row; the supervisor ejects it for ejectMs (doubling
 * each time it is ejected again soon after), never more than maxEjectedPercent of a
 * cluster's targets at once, and sends the table to every worker when it changes.
 */
export class OutlierEjection implements OutlierView {
  private gen: CompiledGeneration | null = null;
  private readonly ejections = new Map<string, Ejection>();
  /** `cluster|target` -> times ejected since the supervisor started. */
  private readonly counts = new Map<string, number>();

  constructor(
    private readonly log: Logger,
    private readonly changed: () => void,
  ) {}

  update(gen: CompiledGeneration | null): void {
    this.gen = gen;
    // A target or cluster gone, or outlier detection switched off: its ejection ends.
    for (const [key, e] of this.ejections) {
      const [cluster, target] = split(key);
      const spec = gen?.clusters[cluster];
      if (spec?.outlier && spec.targets.includes(target)) continue;
      if (e.timer) clearTimeout(e.timer);
      this.ejections.delete(key);
    }
  }

  report(cluster: string, target: string): void {
    const spec = this.gen?.clusters[cluster];
    if (!spec?.outlier || !spec.targets.includes(target)) return;
    const key = `${cluster}|${target}`;
    const now = Date.now();
    const e = this.ejections.get(key) ?? { times: 0, until: 0, timer: null, backAt: 0, lastMs: 0 };
    if (e.until > now) return; // already out
    const out = [...this.ejections.entries()].filter(([k, x]) => split(k)[0] === cluster && x.until > now).length;
    const allowed = Math.floor((spec.targets.length * spec.outlier.maxEjectedPercent) / 100);
    if (out >= allowed) {
      this.log.warn({ cluster, target, ejected: out, maxEjectedPercent: spec.outlier.maxEjectedPercent }, 'upstream target failing, not ejected: the cluster has as many ejected as it may');
      return;
    }
    if (e.backAt !== 0 && now - e.backAt > e.lastMs) e.times = 0;
    const ms = spec.outlier.ejectMs * 2 ** Math.min(e.times, MAX_DOUBLINGS);
    e.times++;
    e.until = now + ms;
    e.lastMs = ms;
    e.timer = setTimeout(() => this.back(key), ms);
    e.timer.unref();
    this.ejections.set(key, e);
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    this.log.warn({ cluster, target, ejectMs: ms, times: e.times }, 'upstream target ejected: out of rotation');
    this.changed();
  }

  /** Clusters to their ejected targets. */
  table(): HealthTable {
    const t: HealthTable = {};
    const now = Date.now();
    for (const [key, e] of this.ejections) {
      if (e.until <= now) continue;
      const [cluster, target] = split(key);
      (t[cluster] ??= []).push(target);
    }
    return t;
  }

  /** Until when `target` of `cluster` is ejected (null: it is not). */
  ejectedUntil(cluster: string, target: string): number | null {
    const e = this.ejections.get(`${cluster}|${target}`);
    return e && e.until > Date.now() ? e.until : null;
  }

  /** The targets of clusters with outlier detection in the served generation. */
  watched(): [string, string][] {
    return Object.entries(this.gen?.clusters ?? {}).flatMap(([cluster, c]) => (c.outlier ? [...new Set(c.targets)].map((t): [string, string] => [cluster, t]) : []));
  }

  /** [cluster, target, times ejected] for every target ejected at least once. */
  ejectionCounts(): [string, string, number][] {
    return [...this.counts].map(([key, n]) => {
      const [cluster, target] = split(key);
      return [cluster, target, n];
    });
  }

  stop(): void {
    for (const e of this.ejections.values()) if (e.timer) clearTimeout(e.timer);
  }

  private back(key: string): void {
    const e = this.ejections.get(key);
    if (!e) return;
    e.timer = null;
    e.backAt = Date.now();
    const [cluster, target] = split(key);
    this.log.info({ cluster, target }, 'upstream target back from ejection: in rotation');
    this.changed();
  }
}

function split(key: string): [string, string] {
  const i = key.lastIndexOf('|');
  return [key.slice(0, i), key.slice(i + 1)];
}
