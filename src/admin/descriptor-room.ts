import { readFileSync, readdirSync } from 'node:fs';

/**
 * Descriptors kept for everything but admin connections: the store, the workers' IPC
 * channels, log files, health probes and Redis/PostgreSQL connections opened later.
 * An eighth of the limit, at least 64 (at 1,024: 128).
 */
export function reservedDescriptors(limit: number): number {
  return Math.max(64, Math.floor(limit / 8));
}

/** The floor the cap may dip into the reserve for, so an operator still gets in on a process near its limit. */
export const CAP_FLOOR = 16;
/**
 * Descriptors the cap never takes, whatever the floor: the accept of a connection over the
 * cap (it is open before another is closed for it) and connections closed but not yet
 * released.
 */
export const CAP_SPARE = 8;

/**
 * How many admin connections fit: `max`, lowered to what the descriptor `limit` leaves
 * once the descriptors that are not admin connections (`others`) and the reserve are
 * counted. Below CAP_FLOOR it may take from the reserve up to CAP_FLOOR, but never more
 * than the free descriptors less CAP_SPARE, and at least 1: a process with fewer than
 * CAP_SPARE + 1 free descriptors admits one connection and refuses or evicts for the rest.
 * A null limit (unknown, or unlimited): `max`.
 */
export function admitCap(max: number, limit: number | null, others: number): number {
  if (limit === null) return max;
  const free = limit - others;
  const cap = Math.min(max, free - reservedDescriptors(limit));
  return Math.max(1, cap >= CAP_FLOOR ? cap : Math.min(max, CAP_FLOOR, free - CAP_SPARE));
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
