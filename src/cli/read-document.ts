import { readFileSync } from 'node:fs';

/**
 * The document of a write: from `-f file`, or stdin when no file is given (or `-f -`).
 * Stdin is read as a stream to its end: a synchronous read of fd 0 fails with EAGAIN
 * when the program feeding the pipe has not written yet.
 */
export async function readDocument(file: string | undefined): Promise<unknown> {
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
