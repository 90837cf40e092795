// What prepack keeps of dist/ after building into it: every file a build rewrites (tsc writes
// each output anew, vite empties dist/console), so a file older than the build's start is
// one no source makes any more.
import { readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Removes every file under `dir` last written before `sinceMs` (a file's mtime, same clock), and folders left empty; returns the paths removed. */
export function pruneStale(dir, sinceMs) {
  const removed = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      removed.push(...pruneStale(path, sinceMs));
      if (readdirSync(path).length === 0) rmSync(path, { recursive: true });
    } else if (statSync(path).mtimeMs < sinceMs) {
      rmSync(path);
      removed.push(path);
    }
  }
  return removed;
}
