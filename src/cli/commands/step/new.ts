import { Args, Command, Flags } from '@oclif/core';
import { resolve } from 'node:path';
import { scaffoldRefusal, writeScaffold } from '../../step-scaffold.js';

export default class StepNew extends Command {
  static override summary = 'Write a new step package: a working step, its test with switchyard/testing, a README.';
  static override description =
    'Creates ./<code> (or --dir): package.json (switchyard-step-<code>, depending on this gateway as a file: dependency, so switchyard/step and ' +
    'switchyard/testing are the ones it runs), tsconfig.json, src/index.ts (a step that refuses a request without a header with a declared 400 ' +
    'answer and marks the others for the upstream), src/test/index.test.ts and README.md. Then: npm install, npm test. An existing folder is ' +
    'never written into. On a terminal the answer is text; through a pipe or with --json, JSON.';
  static override examples = ['<%= config.bin %> step new require-tenant', '<%= config.bin %> step new require-tenant --dir steps/require-tenant'];
  static override args = {
    code: Args.string({ description: "the step's code: lower case a-z, 0-9, '-', 2 to 63 characters", required: true }),
  };
  static override flags = {
    dir: Flags.string({ description: 'the folder to create (default ./<code>)' }),
    json: Flags.boolean({ description: 'print what was written as JSON (the default through a pipe)' }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(StepNew);
    const dir = resolve(flags.dir ?? args.code);
    const refusal = scaffoldRefusal(args.code, dir);
    if (refusal) {
      process.stderr.write(`Error: ${refusal} (Cli.Input)\n`);
      process.stdout.write(JSON.stringify({ code: 'Cli.Input', message: refusal }) + '\n');
      process.exitCode = 2;
      return;
    }
    const files = writeScaffold({ code: args.code, dir, gatewayRoot: this.config.root, gatewayPackage: this.config.pjson as { devDependencies?: Record<string, string> } });
    const next = [`cd ${dir}`, 'npm install', 'npm test'];
    if (flags.json || process.stdout.isTTY !== true) {
      process.stdout.write(JSON.stringify({ dir, package: `switchyard-step-${args.code}`, code: args.code, gateway: this.config.root, files, next }) + '\n');
      return;
    }
    process.stdout.write(`Wrote step ${args.code} in ${dir}:\n${files.map((f) => `  ${f}`).join('\n')}\n\nNext:\n${next.map((l) => `  ${l}`).join('\n')}\n`);
  }
}
