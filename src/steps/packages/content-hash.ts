import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

/**
 * A step package's build identity: sha256 over its files, in sorted order of their paths
 * relative to the package folder (`/`-separated), each as `path NUL sha256(content) LF`.
 * Left out: node_modules, and every file or folder whose name starts with a dot (.git,
 * .DS_Store). Symbolic links are followed to files, never to folders (no loops).
 */
export function contentHash(dir: string): string {
  const files: string[] = [];
  walk(dir, dir, files);
  files.sort();
  const h = createHash('sha256');
  for (const rel of files) {
    const digest = createHash('sha256').update(readFileSync(join(dir, rel))).digest('hex');
    h.update(`${rel}\u0000${digest}\n`);
  }
  return h.digest('hex');
}

function walk(root: string, dir: string, out: string[]): void {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name.startsWith('.') || e.name === 'node_modules') continue;
    const path = join(dir, e.name);
    if (e.isDirectory()) walk(root, path, out);
    else if (e.isFile() || (e.isSymbolicLink() && statSync(path, { throwIfNoEntry: false })?.isFile())) out.push(relative(root, path).split(sep).join('/'));
  }
}
