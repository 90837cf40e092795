import type { Hook } from '@oclif/core';
import askToRun from '@oclif/plugin-not-found';
import levenshtein from 'fast-levenshtein';

/**
 * The known command closest to `id` (its words joined by ":"), if close enough to be what
 * was meant. Each command is compared with as many leading words of `id` as it has: the
 * rest of a mistyped `config st route api` are arguments. The edit distance is
 * fast-levenshtein's (what @oclif/plugin-not-found uses); the bound keeps a word far from
 * every command (`frobnicate`) without a guess.
 */
export function closest(id: string, known: readonly string[]): string | null {
  const words = id.split(':');
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const k of known) {
    const head = words.slice(0, k.split(':').length).join(':');
    const d = levenshtein.get(head, k);
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
