/**
 * Whether a regular expression repeats a group that itself repeats without bound
 * (`(a+)+`, `(\w*x)*`, `(a{2,})+`): the shape that backtracks exponentially on a
 * near-miss, so one request could hold a worker for seconds. Steps that run operator
 * patterns against request data (path-rewrite, bot-detection) refuse such patterns at
 * compile time. A heuristic on the pattern's text: escapes and character classes are
 * skipped; it does not catch every slow pattern (overlapping alternatives), only the
 * classic one.
 */
export function repeatsARepetition(pattern: string): boolean {
  // One frame per open group: did anything inside it repeat without bound?
  const groups: boolean[] = [];
  let lastGroupRepeats = false; // the group just closed (a quantifier may follow it)
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') {
      i++;
      lastGroupRepeats = false;
      continue;
    }
    if (c === '[') {
      // skip the class: up to the first unescaped ']' after its first character
      for (i += pattern[i + 1] === ']' ? 2 : 1; i < pattern.length && pattern[i] !== ']'; i++) if (pattern[i] === '\\') i++;
      lastGroupRepeats = false;
      continue;
    }
    if (c === '(') {
      groups.push(false);
      lastGroupRepeats = false;
      continue;
    }
    if (c === ')') {
      lastGroupRepeats = groups.pop() ?? false;
      if (lastGroupRepeats && groups.length) groups[groups.length - 1] = true;
      continue;
    }
    const unbounded = c === '*' || c === '+' || (c === '{' && /^\{\d*,\}/.test(pattern.slice(i)));
    if (unbounded) {
      if (lastGroupRepeats) return true;
      if (groups.length) groups[groups.length - 1] = true;
    }
    lastGroupRepeats = false;
  }
  return false;
}
