import { Command, Flags } from '@oclif/core';
import { loadGatewayConfig } from '../../shared/gateway-config.js';
import { dataPlaneEngine, listenerEngines, type ListenerEngine } from '../../shared/engine-choice.js';
import { uwsSupport } from '../../shared/uws-support.js';
import { EXIT } from '../../supervisor/boot-error.js';
import { checkVolume } from '../../store/volume.js';
import { loadGatewaySteps } from '../../supervisor/step-packages.js';

export default class Validate extends Command {
  static override summary = 'Check a worker.json with the same loader and checks as `run`, without starting anything.';
  static override examples = [
    '<%= config.bin %> validate --config worker.json',
  ];
  static override flags = {
    config: Flags.string({ char: 'c', required: true, description: 'path to worker.json' }),
  };

  async run(): Promise<{ ok: boolean; exitCode: number; warnings: string[]; listeners?: ListenerEngine[]; errors?: unknown[] }> {
    const { flags } = await this.parse(Validate);
    const support = uwsSupport();
    const loaded = loadGatewayConfig(flags.config, process.env, () => support);
    // The volume too, as `run` opens it: a file that is not a SQLite database, or one held
    // by a running gateway, fails here as it would there (exit 10).
    const volumeError = loaded.ok && loaded.config ? checkVolume(loaded.config.volume, loaded.baseDir) : null;
    // The step packages too, as `run` loads them: a missing one, a bad definition or a code clash.
    const stepsError = loaded.ok && loaded.config ? await loadGatewaySteps(loaded.config.steps, loaded.baseDir).then(() => null, (err: Error) => err.message) : null;
    const errors = loaded.ok ? [...(volumeError ? [{ path: 'volume', message: volumeError }] : []), ...(stepsError ? [{ path: 'steps.packages', message: stepsError }] : [])] : loaded.errors;
    const ok = errors.length === 0;
    const exitCode = ok ? EXIT.ok : EXIT.bootstrap;
    // Which engine `run` would start on this runtime, and what each listener speaks.
    const listen = loaded.config?.listen;
    const listeners = listen ? listenerEngines(listen, dataPlaneEngine(listen, support)) : undefined;
    const result = { ok, exitCode, warnings: loaded.warnings, ...(listeners ? { listeners } : {}), ...(ok ? {} : { errors }) };
    process.stdout.write(JSON.stringify(result, null, 2) + '\n');
    process.exitCode = exitCode;
    return result;
  }
}
