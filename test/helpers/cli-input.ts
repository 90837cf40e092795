import { runCli, type CliResult } from './cli.js';

/** Like runCli, but writes `input` to the command's stdin (then closes it). */
export function runCliWithInput(
  args: string[],
  input: string,
  opts: { env?: Record<string, string | undefined>; timeoutMs?: number } = {},
): Promise<CliResult> {
  return runCli(args, { ...opts, input });
}
