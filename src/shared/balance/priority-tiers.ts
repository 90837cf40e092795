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
