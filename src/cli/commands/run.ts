import { Command, Flags } from '@oclif/core';
import { startSupervisor } from '../../supervisor/supervisor.js';
import { BootError, EXIT } from '../../supervisor/boot-error.js';

export default class Run extends Command {
  static override summary = 'Start the gateway: the supervisor, its admin port and the data-plane workers.';
  static override examples = [
    '<%= config.bin %> run --config worker.json',
    'SWITCHYARD_ROOT_TOKEN=$(openssl rand -hex 24) <%= config.bin %> run -c config/worker.example.json',
  ];
  static override description =
    'Prints one ready line on stdout once every worker listens; logs are JSON on stderr. ' +
    'Exit codes: 0 after a graceful SIGTERM/SIGINT, 10 bootstrap failure, 11 binding failure.';
  static override flags = {
    config: Flags.string({ char: 'c', required: true, description: 'path to worker.json' }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(Run);
    try {
      const running = await startSupervisor(flags.config);
      process.stdout.write(running.readyLine + '\n');
      process.exit(await running.stopped);
    } catch (err) {
      const code = err instanceof BootError ? err.exitCode : EXIT.bootstrap;
      const details = err instanceof BootError && err.details ? ` ${JSON.stringify(err.details)}` : '';
      process.stderr.write(
        JSON.stringify({ level: 'fatal', msg: `switchyard: ${(err as Error).message}${details}`, exitCode: code }) + '\n',
      );
      process.exit(code);
    }
  }
}
