import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { BootError, EXIT } from './boot-error.js';

/**
 * Opens the access log file for appending once, its folder made if missing, as each worker
 * will: a path no worker could write fails the boot (exit 10), rather than losing lines later.
 */
export function checkAccessLogFile(path: string | undefined): void {
  if (path === undefined) return;
  try {
    mkdirSync(dirname(path), { recursive: true });
    closeSync(openSync(path, 'a'));
  } catch (err) {
    throw new BootError(EXIT.bootstrap, `cannot open access log ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
}
