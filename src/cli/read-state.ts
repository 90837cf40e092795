import { Flags } from '@oclif/core';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

/** `-f`: the state document diff and sync read. */
export const stateFileFlag = Flags.string({ char: 'f', required: true, description: 'the state document, YAML or JSON (- for stdin)' });

/**
 * A state document from `-f file` (or `-f -`: stdin), YAML or JSON (JSON is YAML). The
 * parse error names the line; what the document means is checked by the admin port.
 */
export async function readState(file: string): Promise<unknown> {
  const text = file === '-' ? await readStdin() : readFileSync(file, 'utf8');
  try {
    return parse(text, { prettyErrors: true, uniqueKeys: true, maxAliasCount: 100 });
  } catch (err) {
    throw new Error(`${file === '-' ? 'stdin' : file} is not valid YAML or JSON: ${(err as Error).message.split('\n')[0]}`);
  }
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY === true) throw new Error('no document: pass -f <file>, or -f - with the document piped in');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
