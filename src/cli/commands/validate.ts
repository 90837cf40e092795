import { Command, Flags } from '@oclif/core';
import { loadWorkerConfig } from '../../shared/worker-config.js';
import { EXIT } from '../../supervisor/boot-error.js';

export default class Validate extends Command {
  static override summary = 'Check a worker.json with the same loader and checks as `run`, without starting anything.';
  static override flags = {
    config: Flags.string({ char: 'c', required: true, description: 'path to worker.json' }),
  };

  async run(): Promise<{ ok: boolean; exitCode: number; warnings: string[]; errors?: unknown[] }> {
    const { flags } = await this.parse(Validate);
    const loaded = loadWorkerConfig(flags.config);
    const exitCode = loaded.ok ? EXIT.ok : EXIT.bootstrap;
    const result = { ok: loaded.ok, exitCode, warnings: loaded.warnings, ...(loaded.ok ? {} : { errors: loaded.errors }) };
    process.stdout.write(JSON.stringify(result, null, 2) + '\n');
    process.exitCode = exitCode;
    return result;
  }
}
