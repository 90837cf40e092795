import { readFileSync, readdirSync } from 'node:fs';

/**
 * Descriptors kept for everything but admin connections: the store, the workers' IPC
 * channels, log files, health probes and Redis/PostgreSQL connections opened later.
 * An eighth of the limit, at least 64 (at 1,024: 128).
 */
export function reservedDescriptors(limit: number): number {
  return Math.max(64, Math.floor(limit / 8));
}

/**
 * How many admin connections fit: `max`, lowered to what the descriptor `limit` leaves
 * once the descriptors that are not admin connections (`others`) and the reserve are
 * counted. Never under 16, so an operator still gets in on a process at its limit.
 * A null limit (unknown, or unlimited): `max`.
 */
export function admitCap(max: number, limit: number | null, others: number): number {
  if (limit === null) return max;
  return Math.max(16, Math.min(max, limit - others - reservedDescriptors(limit)));
}

/** The soft "Max open files" of a /proc/<pid>/limits text; null when absent or unlimited. */
export function parseOpenFilesLimit(limits: string): number | null {
  const m = /^Max open files\s+(\d+|unlimited)\s/m.exec(limits);
  return m && m[1] !== 'unlimited' ? Number(m[1]) : null;
}

// Node has no getrlimit, and `prlimit --pid` can change the limit while the process runs,
// so both are read from /proc (Linux) again and again. Measured on a loaded 2-vCPU VM:
// about 100 µs for the limit; the count 30 µs at 20 descriptors, 2.7 ms at 1,000.

/** RLIMIT_NOFILE's soft limit (an accept past it fails); null where /proc is missing. */
export function readOpenFilesLimit(): number | null {
  try {
    return parseOpenFilesLimit(readFileSync('/proc/self/limits', 'latin1'));
  } catch {
    return null;
  }
}

/** How many descriptors this process holds; null where /proc is missing. */
export function countOpenDescriptors(): number | null {
  try {
    return readdirSync('/proc/self/fd').length;
  } catch {
    return null;
  }
}
