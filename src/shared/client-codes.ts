/**
 * Codes the CLI and the console print themselves, for failures that never reached the
 * admin port, in the same {code, message} shape as its errors. Part of the one error
 * registry (see errors.ts). `exit` is the CLI's exit code.
 */
export const CLI_ERRORS = {
  'Cli.Input': { exit: 2, message: 'The command line or a document it names is not usable input' },
  'Cli.Unreachable': { exit: 4, message: 'The admin port could not be reached' },
} as const satisfies Record<string, { exit: number; message: string }>;

export type CliCode = keyof typeof CLI_ERRORS;

export const CONSOLE_ERRORS = {
  'Console.Unreachable': { message: 'The admin port could not be reached: the gateway may be stopped or restarting. Try again.' },
} as const satisfies Record<string, { message: string }>;

export type ConsoleCode = keyof typeof CONSOLE_ERRORS;
