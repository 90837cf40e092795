import { readFileSync } from 'node:fs';

/**
 * The document of a write: from `-f file`, or stdin when no file is given (or `-f -`).
 * Stdin is read as a stream to its end: a synchronous read of fd 0 fails with EAGAIN
 * when the program feeding the pipe has not written yet. `example` shows a terminal user
 * how to pass one.
 */
export async function readDocument(file: string | undefined, example: string): Promise<unknown> {
  // A terminal on stdin would wait for a document the user does not know to type.
  if ((file === undefined || file === '-') && process.stdin.isTTY === true) {
    throw new Error(`no document: pass -f <file>, or pipe it in: ${example}`);
  }
  const text = file === undefined || file === '-' ? await readStdin() : readFileSync(file, 'utf8');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`${file ?? 'stdin'} is not valid JSON: ${(err as Error).message}`);
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
