/** The shortest head deadline, reached when the admin port is full. */
export const MIN_HEAD_DEADLINE_MS = 1_000;
/**
 * The head deadline at `load` (open connections / cap): the full deadline up to half
 * full, then shrinking linearly to MIN_HEAD_DEADLINE_MS when full: a flood of
 * unfinished heads is shed faster the closer it gets to the cap, while a head sent at
 * once never waits.
 */
export function headDeadlineMs(load: number, fullMs: number): number {
  if (load <= 0.5) return fullMs;
  return Math.min(fullMs, Math.max(MIN_HEAD_DEADLINE_MS, Math.round(fullMs * (1 - load) * 2)));
}
