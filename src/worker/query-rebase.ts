/**
 * `current` with the change that turned `before` into `after` made to it, segment by
 * segment (bytes as sent): the segments `before` had and `after` has not are removed from
 * `current` (each once), and those `after` has and `before` had not are appended in
 * `after`'s order. A parallel group's members each edit the query as it was before the
 * group; applied this way their edits compose (key-auth's removal of its key survives a
 * sibling query-params' addition) instead of the last whole query winning.
 */
export function rebaseQuery(current: string | null, before: string | null, after: string | null): string | null {
  if (current === before) return after; // nothing else changed it: the member's query as it made it
  const left = new Map<string, number>(); // removed by the member: segment -> how many times
  for (const s of segments(before)) left.set(s, (left.get(s) ?? 0) + 1);
  const added: string[] = [];
  for (const s of segments(after)) {
    const n = left.get(s) ?? 0;
    if (n > 0) left.set(s, n - 1);
    else added.push(s);
  }
  const out: string[] = [];
  for (const s of segments(current)) {
    const n = left.get(s) ?? 0;
    if (n > 0) left.set(s, n - 1);
    else out.push(s);
  }
  out.push(...added);
  return out.some((s) => s !== '') ? out.join('&') : null;
}

const segments = (q: string | null): string[] => (q === null || q === '' ? [] : q.split('&'));
