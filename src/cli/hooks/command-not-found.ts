import type { Hook } from '@oclif/core';
import askToRun from '@oclif/plugin-not-found';

/**
 * Edit distance between two command ids (insertions, deletions, substitutions). Ours: the
 * plugin's fast-levenshtein is its own dependency, not exported, and not the gateway's.
 */
export function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row.push(Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)));
    prev = row;
  }
  return prev[b.length]!;
}

/**
 * The known command closest to `id` (its words joined by ":"), if close enough to be what
 * was meant. Each command is compared with as many leading words of `id` as it has: the
 * rest of a mistyped `config st route api` are arguments.
 */
export function closest(id: string, known: readonly string[]): string | null {
  const words = id.split(':');
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const k of known) {
    const head = words.slice(0, k.split(':').length).join(':');
    const d = distance(head, k);
    if (d < bestDistance || (d === bestDistance && best !== null && k.length < best.length)) [best, bestDistance] = [k, d];
  }
  return best !== null && bestDistance <= Math.max(2, Math.floor(best.length / 4)) ? best : null;
}

/**
 * An unknown command: the closest one as a suggestion, on stderr for people and as a
 * Cli.Input envelope on stdout for scripts (as every other bad input), exit 2.
 *
 * @oclif/plugin-not-found alone exits 127 with no envelope, names its guess only inside its
 * prompt, and guesses some command for any word (its `closest` has no limit and is not
 * exported); so this hook decides, and the plugin asks: on a terminal (stdin and stdout),
 * with a guess, it prompts "Did you mean …?" (no after 10 s) and runs that command on yes.
 * It is not in oclif `plugins`: oclif would run its hook beside this one, and both answer.
 */
const hook: Hook.CommandNotFound = async function (opts) {
  const spaced = (id: string) => id.replaceAll(':', ' ');
  const wanted = spaced(opts.id);
  const guess = closest(opts.id, opts.config.commandIDs);
  const fail = (): void => {
    const message = `${wanted} is not a ${opts.config.bin} command${guess ? `; did you mean ${spaced(guess)}?` : ''}`;
    process.stderr.write(`Error: ${message}\n  ${opts.config.bin} --help lists every command\n`);
    process.stdout.write(JSON.stringify({ code: 'Cli.Input', message }) + '\n');
    this.exit(2);
  };
  if (guess === null || !process.stdin.isTTY || !process.stdout.isTTY) return fail();
  // The plugin sees one command, the guess; its refusal (exit 127) becomes this one.
  const config = Object.create(opts.config, { commandIDs: { value: [guess] }, commands: { value: [] } }) as typeof opts.config;
  return askToRun.call({ ...this, error: fail }, { ...opts, config });
};

export default hook;
