import { fstatSync } from 'node:fs';

/** The descriptor the worker pool opens as each worker's report pipe (its stdio's fifth entry). */
const REPORT_FD = 4;

/**
 * The report pipe's descriptor when this process has one (forked by the worker pool), else
 * null: a worker started any other way runs without the stall watchdog rather than writing
 * to a descriptor that is not ours.
 */
export function reportPipe(): number | null {
  if (process.env.SWITCHYARD_WORKER_SLOT === undefined) return null;
  try {
    const st = fstatSync(REPORT_FD);
    return st.isFIFO() || st.isSocket() ? REPORT_FD : null;
  } catch {
    return null;
  }
}
