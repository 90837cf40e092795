/**
 * `--json` may stand alone (the whole body) or take a field list (`--json name,state`), as
 * gh's does. oclif's string flags always take a value, so a bare `--json` (last, or before
 * another flag) is given the value `*` before parsing. The word after `--json` is always its
 * field list: to print the whole body, put `--json` last.
 */
export function jsonFlagValue(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') return [...out, ...argv.slice(i)];
    if (a === '--json' && (i + 1 === argv.length || argv[i + 1]!.startsWith('-'))) out.push('--json=*');
    else out.push(a);
  }
  return out;
}
