import { Command, Flags } from '@oclif/core';
import { loadGatewayConfig } from '../../../shared/gateway-config.js';
import { EXIT } from '../../../supervisor/boot-error.js';
import { packageStepsDoc } from '../../../supervisor/step-packages.js';

export default class StepDocs extends Command {
  static override summary = "Print the installed step packages' docs (Markdown, as docs/steps.md shows the built-ins).";
  static override description =
    'Loads the packages worker.json `steps.packages` names, as `run` does, and prints each step: its package, version and build, ' +
    'the tenants that may use it, its settings table, its answers and its example. Exit 10 when the configuration or a package cannot be loaded.';
  static override examples = ['<%= config.bin %> step docs --config worker.json > docs/installed-steps.md'];
  static override flags = {
    config: Flags.string({ char: 'c', default: 'worker.json', description: 'path to worker.json' }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(StepDocs);
    const loaded = loadGatewayConfig(flags.config);
    if (!loaded.ok || !loaded.config) {
      process.stderr.write(`${JSON.stringify({ ok: false, errors: loaded.errors })}\n`);
      process.exitCode = EXIT.bootstrap;
      return;
    }
    try {
      process.stdout.write(await packageStepsDoc(loaded.config.steps, loaded.baseDir));
    } catch (err) {
      process.stderr.write(`${JSON.stringify({ ok: false, errors: [{ path: 'steps.packages', message: (err as Error).message }] })}\n`);
      process.exitCode = EXIT.bootstrap;
    }
  }
}
