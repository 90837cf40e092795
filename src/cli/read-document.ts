import { readFileSync } from 'node:fs';

/** The document of a write: from `-f file`, or stdin when no file is given (or `-f -`). */
export function readDocument(file: string | undefined): unknown {
  const text = file === undefined || file === '-' ? readFileSync(0, 'utf8') : readFileSync(file, 'utf8');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`${file ?? 'stdin'} is not valid JSON: ${(err as Error).message}`);
  }
}
