import { readFileSync, readdirSync } from 'node:fs';

/** The process's descriptor limit and how many it has open. */
export interface Descriptors {
  /** RLIMIT_NOFILE's soft limit: an accept(2) past it fails. */
  limit: number;
  open: number;
}

/**
 * Descriptors kept for everything but admin connections: the store, the workers' IPC
 * channels, log files, health probes and Redis/PostgreSQL connections opened later.
 * An eighth of the limit, at least 64 (at 1,024: 128).
 */
export function reservedDescriptors(limit: number): number {
  return Math.max(64, Math.floor(limit / 8));
}

/**
 * How many admin connections fit: `max`, lowered to what the descriptor limit leaves
 * once the descriptors that are not admin connections (`others`) and the reserve are
 * counted. Never under 16, so an operator still gets in on a process at its limit.
 */
export function admitCap(max: number, d: Descriptors | null, adminOpen: number): number {
  if (d === null) return max;
  const others = Math.max(0, d.open - adminOpen);
  return Math.max(16, Math.min(max, d.limit - others - reservedDescriptors(d.limit)));
}

/** The soft "Max open files" of a /proc/<pid>/limits text; null when absent or unlimited. */
export function parseOpenFilesLimit(limits: string): number | null {
  const m = /^Max open files\s+(\d+|unlimited)\s/m.exec(limits);
  return m && m[1] !== 'unlimited' ? Number(m[1]) : null;
}

/**
 * Reads this process's descriptor limit and count from /proc (Linux): node has no
 * getrlimit, and `prlimit --pid` can lower the limit while the process runs, so it is
 * read again, not once. About 50 µs for the limit and 20–300 µs for the count (10 to
 * 1,000 descriptors). Null where /proc is missing: the configured cap alone holds.
 */
export function readDescriptors(): Descriptors | null {
  try {
    const limit = parseOpenFilesLimit(readFileSync('/proc/self/limits', 'latin1'));
    if (limit === null) return null;
    return { limit, open: readdirSync('/proc/self/fd').length };
  } catch {
    return null;
  }
}
