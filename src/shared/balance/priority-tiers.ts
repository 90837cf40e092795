/**
 * SRV priorities (RFC 2782): only the targets of the lowest priority value that has one in
 * rotation serve; the next group serves once every target of that one is out. `down` is the
 * health verdict per target; the answer adds the targets of the other groups. When every
 * target is down the verdicts stay as they are (the pools then serve all: panic).
 */
export function priorityDown(down: readonly boolean[], priorities: readonly number[] | undefined): boolean[] {
  if (!priorities) return [...down];
  let best = Infinity;
  down.forEach((d, i) => {
    if (!d && priorities[i]! < best) best = priorities[i]!;
  });
  if (best === Infinity) return [...down];
  return down.map((d, i) => d || priorities[i]! !== best);
}

/**
 * With SRV priorities, a target a worker holds off after a failed connection counts as out
 * until its hold ends (`heldUntil[i]`, Date.now() time; 0 not held), so a group that
 * refuses connections hands over to the next without health checks. Marks them in `down`
 * and answers when the first such hold ends (0: none), when the groups are worked out again.
 */
export function holdOffDown(down: boolean[], heldUntil: readonly number[], now: number): number {
  let until = 0;
  down.forEach((d, i) => {
    const h = heldUntil[i]!;
    if (d || h <= now) return;
    down[i] = true;
    if (until === 0 || h < until) until = h;
  });
  return until;
}
