import { Command, Flags } from '@oclif/core';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { initialConfig, newRootToken, portOr, ROOT_TOKEN_ENV } from '../init-config.js';

export default class Init extends Command {
  static override summary = 'Write a ready worker.json and print its root token once, with the commands to run next.';
  static override description =
    'The file gets a SQLite volume beside it (virtual://switchyard.db), a data port and an admin port on 127.0.0.1 (8080 and 9180 when free, ' +
    'else free ones, or the ones given), and one root key with every scope whose token is read from SWITCHYARD_ROOT_TOKEN: the token is ' +
    'printed here once and never written. An existing worker.json is never overwritten. On a terminal the answer is text; through a pipe or ' +
    'with --json, JSON.';
  static override examples = ['<%= config.bin %> init', '<%= config.bin %> init --dir gateway --port 8081 --admin-port 9181'];
  static override flags = {
    dir: Flags.string({ description: 'folder for worker.json (created if missing)', default: '.' }),
    port: Flags.integer({ description: 'data port (default: 8080 if free, else a free one)', min: 1, max: 65535 }),
    'admin-port': Flags.integer({ description: 'admin port, on 127.0.0.1 (default: 9180 if free, else a free one)', min: 1, max: 65535 }),
    host: Flags.string({ description: 'data port address; 0.0.0.0 to serve other machines', default: '127.0.0.1' }),
    json: Flags.boolean({ description: 'print the answer as JSON (the default through a pipe)' }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(Init);
    const dir = resolve(flags.dir);
    const file = join(dir, 'worker.json');
    if (existsSync(file)) {
      const message = `${file} already exists; init never overwrites a config (remove it, or pick another --dir)`;
      process.stderr.write(`Error: ${message} (Cli.Input)\n`);
      process.stdout.write(JSON.stringify({ code: 'Cli.Input', message }) + '\n');
      process.exitCode = 2;
      return;
    }
    const dataPort = flags.port ?? (await portOr(8080, flags.host));
    const adminPort = flags['admin-port'] ?? (await portOr(9180, '127.0.0.1'));
    mkdirSync(dir, { recursive: true });
    writeFileSync(file, JSON.stringify(initialConfig({ dataHost: flags.host, dataPort, adminPort }), null, 2) + '\n', { flag: 'wx' });
    const token = newRootToken();
    const admin = `http://127.0.0.1:${adminPort}`;
    const next = [
      `export ${ROOT_TOKEN_ENV}=${token}`,
      `${this.config.bin} run --config ${file} &   # or in a terminal of its own, after the same export`,
      `export SWITCHYARD_ADMIN=${admin} SWITCHYARD_TOKEN=$${ROOT_TOKEN_ENV}`,
      `${this.config.bin} whoami`,
    ];
    if (flags.json || process.stdout.isTTY !== true) {
      process.stdout.write(JSON.stringify({ config: file, dataPort, adminPort, tokenEnv: ROOT_TOKEN_ENV, token, admin, next }) + '\n');
      return;
    }
    process.stdout.write(
      `Wrote ${file}: volume virtual://switchyard.db beside it, data port ${flags.host}:${dataPort}, admin port 127.0.0.1:${adminPort}.\n\n` +
        `The root token, shown this once (the file names only its variable, ${ROOT_TOKEN_ENV}):\n\n` +
        next.map((l) => `  ${l}`).join('\n') +
        '\n',
    );
  }
}
